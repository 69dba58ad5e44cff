import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { createEscrowClient, type EscrowClient } from '../../src/a2a/escrow/client.js';
import { ESCROW_METHOD, type EscrowSettings } from '../../src/acmp/escrow/constants.js';
import type { HostFlags } from '../../src/server/config.js';
import type { HostModule } from '../../src/server/module.js';
import { escrowModule, type EscrowModuleOptions } from '../../src/server/modules/escrow.js';
import { KyselyEscrowStore } from '../../src/storage/escrow/escrow-store-kysely.js';
import { startTestHost } from '../helpers/host.js';
import { nano } from '../helpers/escrow-harness.js';

/** Bearer tokens of the three agents (name=secret: identities agent:buyer, agent:provider, agent:mallory). */
export const TOKENS = {
  buyer: 'buyer=buyer-secret-0123456789',
  provider: 'provider=provider-secret-0123456789',
  mallory: 'mallory=mallory-secret-0123456789',
} as const;
export const secret = (name: keyof typeof TOKENS): string => TOKENS[name].split('=')[1]!;

/** Short windows so the tests wait seconds, not days. */
const FAST_SETTINGS: Partial<EscrowSettings> = {
  defaultChallengeWindowMs: 60_000,
  minChallengeWindowMs: 200,
  disputeDeadlineMs: 60_000,
};

/** A host running the escrow agent (SQLite unless `db`), plain HTTP on loopback, the three tokens. */
export async function escrowHost(
  options: {
    db?: string;
    migrate?: boolean;
    module?: EscrowModuleOptions;
    extra?: HostModule[];
    extraFirst?: boolean;
    pushAllow?: string[];
    flags?: HostFlags;
  } = {},
) {
  const module = escrowModule({
    allowPlaintext: true,
    tickMs: 50,
    settings: FAST_SETTINGS,
    ...options.module,
  });
  const host = await startTestHost({
    modules: options.extraFirst ? [...(options.extra ?? []), module] : [module, ...(options.extra ?? [])],
    flags: {
      token: Object.values(TOKENS),
      ...(options.db ? { db: options.db } : {}),
      ...(options.pushAllow ? { 'push-allow': options.pushAllow } : {}),
      ...options.flags,
    },
    migrate: options.migrate,
  });
  const ledger = new KyselyEscrowStore(host.database!);
  return {
    host,
    ledger,
    /** Operator funding of a party's account (CU as a decimal string). */
    credit: (identity: string, cu: string) => ledger.credit('', identity, nano(cu)),
    client: (name: keyof typeof TOKENS, transport?: 'JSONRPC' | 'HTTP+JSON'): Promise<EscrowClient> =>
      createEscrowClient({ agentUrl: host.url, token: secret(name), ...(transport ? { transport } : {}) }),
  };
}

/**
 * The buyer's escrow on `agent` (0.005 CU payable to agent:provider, credit the buyer first), with the
 * buyer's push webhook `buyer-hook` registered on it (A2A §4.3, design §4.6).
 */
export async function escrowWithPushHook(
  agent: Awaited<ReturnType<typeof escrowHost>>,
  hookUrl: string,
): Promise<string> {
  const buyer = await agent.client('buyer');
  const lock = {
    op_ref: 'l',
    amount_cu: 0.005,
    valid_until_ms: Date.now() + 3_600_000,
    payee_id: 'agent:provider',
  };
  const escrowId = (await buyer.call(ESCROW_METHOD.lock, lock)).escrow_id as string;
  const sdk = await createA2AClient(await fetchAgentCard(agent.host.url), { token: secret('buyer') });
  await sdk.createTaskPushNotificationConfig({
    tenant: '',
    id: 'buyer-hook',
    taskId: escrowId,
    url: hookUrl,
    token: 'hook-token',
    authentication: undefined,
  });
  return escrowId;
}

/** Collects what an async iterable yields until `until` says stop (or it ends). */
export async function collectUntil<T>(
  items: AsyncIterable<T>,
  until: (item: T, all: T[]) => boolean,
): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) {
    all.push(item);
    if (until(item, all)) break;
  }
  return all;
}
