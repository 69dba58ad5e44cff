import { createA2AAcmpBuyer, type A2AAcmpBuyer } from '../../src/connect/a2a-acmp-buyer.js';
import { createEscrowClient } from '../../src/a2a/escrow/client.js';
import { ESCROW_METHOD } from '../../src/acmp/escrow/constants.js';
import { ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { KyselyEscrowStore } from '../../src/storage/escrow/escrow-store-kysely.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { escrowModule } from '../../src/server/modules/escrow.js';
import { startTestHost } from './host.js';
import { freshDelta, freshSnapshot } from '../acpspec/helpers.js';
import { leadState } from './acp-builders.js';

/** The operator credential and the caller tokens of the console's test host. */
export const OPERATOR = { name: 'ops', secret: 'operator-secret-0123456789' };
export const BUYER_SECRET = 'buyer-secret-0123456789abc';
const PROVIDER_SECRET = 'provider-secret-0123456789ab';

/** What {@link runConsoleWorkload} did, so tests know the counts the console must show. */
export interface ConsoleWorkload {
  readonly invokes: number;
  readonly failed: number;
  readonly escrows: number;
  readonly agreements: number;
  readonly transactions: number;
  readonly transactionId: string;
  readonly taskIds: string[];
  /** The escrow with a pending claim (its challenge window open) and when the claim was filed. */
  readonly claimed: { escrowId: string; taskId: string; amountCu: number; filedAt: number };
  /** The escrow whose claim the buyer disputed, and when. */
  readonly disputed: { escrowId: string; reason: string; filedAt: number };
}

/** The console's test host: a fetch and the CA that trust its self-signed certificate. */
export type ConsoleHost = Awaited<ReturnType<typeof startConsoleHost>>;

/**
 * One host with escrow, ACMP (Layer 6 negotiation, session mode) and ACPspec on SQLite (or the
 * PostgreSQL database `db` names, migrated when `migrate`), the operator credential set, and buyer and
 * provider tokens; closed by the cleanup.
 */
export async function startConsoleHost(options: { db?: string; migrate?: boolean } = {}) {
  const host = await startTestHost({
    flags: {
      token: [`buyer=${BUYER_SECRET}`, `provider=${PROVIDER_SECRET}`],
      'operator-token': [`${OPERATOR.name}=${OPERATOR.secret}`],
      'tls-self-signed': true,
      ...(options.db ? { db: options.db } : {}),
    },
    migrate: options.migrate,
    modules: [
      escrowModule({ tickMs: 100 }),
      acmpModule({
        capabilities: demoCapabilities({ stepMs: 1 }),
        providerId: 'agent:console-provider',
        negotiation: { sessions: true },
      }),
      acpModule({ producer: { agent_id: 'agent:a2a-commerce-dealer', role: 'dealer_agent' } }),
    ],
  });
  const caCert = host.tls?.cert;
  return { ...host, caCert, fetch: fetchTrusting(caCert) };
}

/** A buyer of the console host (its own escrow agent). */
export function consoleBuyer(host: ConsoleHost): Promise<A2AAcmpBuyer> {
  const { url, caCert } = host;
  return createA2AAcmpBuyer({
    agentUrl: url,
    token: BUYER_SECRET,
    caCert,
    escrow: { agentUrl: url, token: BUYER_SECRET, caCert },
  });
}

/** One more successful invoke (what a live-update test waits to see). */
export async function oneInvoke(buyer: A2AAcmpBuyer): Promise<string> {
  const result = await buyer.invoke({
    capability: 'sentiment-analysis',
    input: { type: 'text', data: 'Revenue grew 12% YoY.' },
    max_price_cu: 0.01,
  });
  return result.task_id;
}

/**
 * Two escrows payable to agent:provider, each claimed by the provider through the escrow agent (L4 §4.4;
 * the default 24 h challenge window stays open); the buyer disputes the second claim (L4 §4.6).
 */
async function claimAndDispute(host: ConsoleHost, buyer: A2AAcmpBuyer) {
  const escrow = buyer.escrow;
  if (!escrow) throw new Error('the console buyer has an escrow agent');
  const provider = await createEscrowClient({
    agentUrl: host.url,
    token: PROVIDER_SECRET,
    caCert: host.caCert,
  });
  const claimOne = async (taskId: string) => {
    const escrowId = await escrow.lock(0.01, Date.now() + 3_600_000);
    await escrow.bind(escrowId, 'agent:provider');
    const filedAt = Date.now();
    await provider.call(ESCROW_METHOD.claim, {
      op_ref: `claim-${taskId}`,
      escrow_id: escrowId,
      amount_cu: 0.004,
      task_id: taskId,
      proof: { method: 'result-hash', hash: 'sha256:00' },
    });
    return { escrowId, taskId, amountCu: 0.004, filedAt };
  };
  const claimed = await claimOne('task_console_claimed');
  const toDispute = await claimOne('task_console_disputed');
  const reason = 'the output is wrong';
  const filedAt = Date.now();
  await escrow.dispute(toDispute.escrowId, reason);
  return { claimed, disputed: { escrowId: toDispute.escrowId, reason, filedAt } };
}

/**
 * A known workload through the real clients: the buyer is funded, invokes three times (one fails: its
 * deadline passes before it counts to the end), negotiates and accepts one flat offer, locks one escrow
 * (held, open) and two that the provider claims (one claim disputed); one ACPspec
 * transaction with personal data (a retail lead) arrives over the HTTPS routes, then a delta whose
 * consent widening is refused (a conflict).
 */
export async function runConsoleWorkload(host: ConsoleHost): Promise<ConsoleWorkload> {
  if (!host.database) throw new Error('the console host runs on a database (not memory stores)');
  const ledger = new KyselyEscrowStore(host.database);
  await ledger.credit('', 'agent:buyer', 10_000_000_000n);
  const buyer = await consoleBuyer(host);
  const taskIds = [await oneInvoke(buyer), await oneInvoke(buyer)];
  const refused = await buyer
    .invoke({
      capability: 'slow-count',
      input: { type: 'text', data: '5000' },
      max_price_cu: 1,
      timeout_ms: 50,
    })
    .then(
      () => false,
      () => true,
    );
  if (!refused) throw new Error('the invoke past its deadline was expected to fail');
  await buyer.negotiate({
    mode: 'flat',
    capability: 'sentiment-analysis',
    max_price_cu: 0.005,
    input: { type: 'text', data: 'Quarterly revenue grew strongly.' },
  });
  await buyer.escrow?.lock(0.5, Date.now() + 3_600_000);
  const { claimed, disputed } = await claimAndDispute(host, buyer);
  const transactionId = `tx-console-${crypto.randomUUID().slice(0, 8)}`;
  const envelope = freshSnapshot(transactionId, leadState());
  await postEnvelope(host, envelope);
  // A delta widening marketing consent (limited → granted) without new evidence: refused and recorded as
  // a consent.conflict event.
  await postEnvelope(
    host,
    freshDelta(envelope, [{ op: 'replace', path: '/consent/p-buyer/marketing/state', value: 'granted' }]),
  );
  return {
    invokes: 3,
    failed: 1,
    escrows: 3,
    agreements: 1,
    transactions: 1,
    transactionId,
    taskIds,
    claimed,
    disputed,
  };
}

/** POSTs one envelope over the ACPspec HTTPS binding as the buyer. @throws Error unless it is accepted. */
async function postEnvelope(host: ConsoleHost, envelope: unknown): Promise<void> {
  const res = await host.fetch(`${host.url}/acp/v0.1/envelopes`, {
    method: 'POST',
    headers: { 'content-type': ACP_MEDIA_TYPE, authorization: `Bearer ${BUYER_SECRET}` },
    body: canonicalJson(envelope),
  });
  if (res.status !== 200)
    throw new Error(`the ACPspec envelope was refused: ${res.status} ${await res.text()}`);
}
