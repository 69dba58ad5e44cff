import { parseArgs } from 'node:util';
import { createEscrowClient } from '../a2a/escrow/client.js';
import { walletEscrowClient } from '../a2a/escrow/wallet-client.js';
import { AcmpError } from '../acmp/wire/errors.js';
import { ESCROW_METHOD, type EscrowMethod } from '../acmp/escrow/constants.js';
import { escrowErrorSpec } from '../acmp/escrow/errors.js';
import { systemIds } from '../shared/ids.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { escrowOperator, OPERATOR_VERBS } from './escrow-operator.js';
import { readPayoutFile } from './escrow-payout.js';
import { walletFromFlags } from './wallet.js';
import { UsageError, type CliIo } from './io.js';

export const ESCROW_USAGE = `Usage (a party, over A2A; the token's identity is the party — never a flag):
  a2a-commerce escrow lock    <agent-url> --amount <cu> --valid-for-ms <ms> [--payee <id>] [--window-ms <ms>] [--op-ref <r>]
  a2a-commerce escrow bind    <agent-url> <escrow-id> --payee <id> [--agreed-price <cu>] [--window-ms <ms>]
  a2a-commerce escrow release <agent-url> <escrow-id> --amount <cu> --payee <id> [--task-id <t>] [--proof <json>]
  a2a-commerce escrow reclaim <agent-url> <escrow-id> [--amount <cu>]
  a2a-commerce escrow claim   <agent-url> <escrow-id> --amount <cu> --task-id <t> --proof <json> [--payout <file>]
  a2a-commerce escrow dispute <agent-url> <escrow-id> --reason <text> [--evidence <json>]
  a2a-commerce escrow status  <agent-url> <escrow-id>
  a2a-commerce escrow watch   <agent-url> <escrow-id>      (one line per transition, until closed)
  common: [--token <t> | A2AC_TOKEN] [--data-dir <dir> | --ca <pem>] [--op-ref <r>]
          [--wallet-limits <file> | A2AC_WALLET_LIMITS]  (spend through the operator's wallet)
Usage (the operator, on the escrow agent's database: --db <url> | A2AC_DB, default SQLite under --data-dir):
  a2a-commerce escrow credit  --account <identity> --amount <cu> [--op-ref <r>]   (once per --op-ref)
  a2a-commerce escrow resolve <escrow-id> --to-payee <cu>   (the rest of the remaining balance to the buyer)
  a2a-commerce escrow ledger  [--account <identity>]
  a2a-commerce escrow payout  <party> [--file <payout.json>]   (register the party's payout list, or show it)

Mutating verbs send an op_ref (L4 §3): a generated one unless --op-ref is given; repeat a call that
lost its answer with the same --op-ref to get the first outcome instead of a second operation.
Prints the result JSON; exits 1 with the code (e.g. -35003 invalid_state) on stderr when refused.`;

const OPTIONS = {
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  ca: { type: 'string' },
  db: { type: 'string' },
  'op-ref': { type: 'string' },
  amount: { type: 'string' },
  'valid-for-ms': { type: 'string' },
  payee: { type: 'string' },
  'window-ms': { type: 'string' },
  'agreed-price': { type: 'string' },
  'task-id': { type: 'string' },
  proof: { type: 'string' },
  reason: { type: 'string' },
  evidence: { type: 'string' },
  account: { type: 'string' },
  'to-payee': { type: 'string' },
  'wallet-limits': { type: 'string' },
  file: { type: 'string' },
  payout: { type: 'string' },
} as const;

type Values = { [K in keyof typeof OPTIONS]?: string };

const METHODS: Record<string, EscrowMethod> = {
  lock: ESCROW_METHOD.lock,
  bind: ESCROW_METHOD.bind,
  release: ESCROW_METHOD.release,
  reclaim: ESCROW_METHOD.reclaim,
  claim: ESCROW_METHOD.claim,
  dispute: ESCROW_METHOD.dispute,
  status: ESCROW_METHOD.status,
};

/** `a2a-commerce escrow <verb> …`. */
export async function escrow(argv: string[], io: CliIo): Promise<number> {
  const [verb, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true });
  if (verb !== undefined && OPERATOR_VERBS.includes(verb))
    return escrowOperator({ verb, values, positionals }, io);
  const { url, call } = partyCall(verb, positionals);
  const raw = await createEscrowClient({
    agentUrl: url,
    token: tokenFromFlags(values, io.env),
    caCert: caFromFlags(values, io.env),
  });
  // With the operator's wallet, the party's operations are limited, recorded and logged (docs/acmp-wallet.md).
  const open = await walletFromFlags(values, io.env);
  try {
    const client = open ? await walletEscrowClient(raw, open.wallet) : raw;
    if (call.kind === 'watch') {
      for await (const status of client.watch(call.escrowId)) io.out(JSON.stringify(status));
      return 0;
    }
    io.out(
      JSON.stringify(await client.call(call.method, paramsOf(call.method, values, call.escrowId)), null, 2),
    );
    return 0;
  } catch (error) {
    if (!(error instanceof AcmpError)) throw error;
    const name = escrowErrorSpec(error.code)?.name;
    io.err(
      `error ${error.code}${name ? ` (${name})` : ''}: ${error.message}${error.data === undefined ? '' : ` ${JSON.stringify(error.data)}`}`,
    );
    return 1;
  } finally {
    await open?.close();
  }
}

/** What a party verb asks of the escrow agent: follow an escrow, or one Layer 4 call. */
type PartyCall =
  { kind: 'watch'; escrowId: string } | { kind: 'call'; method: EscrowMethod; escrowId: string | undefined };

/**
 * The agent URL and the call of a party verb: `lock` takes only `<agent-url>`, every other verb
 * `<agent-url> <escrow-id>`. @throws UsageError for an unknown verb or the wrong positionals.
 */
function partyCall(verb: string | undefined, positionals: string[]): { url: string; call: PartyCall } {
  const method = verb === undefined ? undefined : METHODS[verb];
  if (method === undefined && verb !== 'watch')
    throw new UsageError(verb === undefined ? 'escrow needs a verb' : `unknown escrow verb "${verb}"`);
  const [url, escrowId, extra] = positionals;
  if (!url || !/^https?:\/\//.test(url)) throw new UsageError('expected an <agent-url> (http or https)');
  if (verb === 'lock') {
    if (escrowId !== undefined) throw new UsageError('lock takes only <agent-url>');
    return { url, call: { kind: 'call', method: ESCROW_METHOD.lock, escrowId } };
  }
  if (escrowId === undefined || extra !== undefined) throw new UsageError('expected <agent-url> <escrow-id>');
  return {
    url,
    call: method === undefined ? { kind: 'watch', escrowId } : { kind: 'call', method, escrowId },
  };
}

/** The Layer 4 params the flags describe. @throws UsageError for missing or malformed flags. */
function paramsOf(method: EscrowMethod, v: Values, escrowId: string | undefined): Record<string, unknown> {
  const opRef = v['op-ref'] ?? systemIds.newId('op');
  const need = (name: keyof Values): string => {
    const value = v[name];
    if (value === undefined) throw new UsageError(`--${name} is required`);
    return value;
  };
  const optional = (
    name: keyof Values,
    key: string,
    read: (s: string) => unknown,
  ): Record<string, unknown> => (v[name] === undefined ? {} : { [key]: read(v[name]) });
  switch (method) {
    case ESCROW_METHOD.lock:
      return {
        op_ref: opRef,
        amount_cu: cu(need('amount')),
        valid_until_ms: Date.now() + int(need('valid-for-ms')),
        ...optional('payee', 'payee_id', String),
        ...optional('window-ms', 'challenge_window_ms', int),
      };
    case ESCROW_METHOD.bind:
      return {
        op_ref: opRef,
        escrow_id: escrowId,
        payee_id: need('payee'),
        ...optional('agreed-price', 'agreed_price_cu', cu),
        ...optional('window-ms', 'challenge_window_ms', int),
      };
    case ESCROW_METHOD.release:
      return {
        op_ref: opRef,
        escrow_id: escrowId,
        amount_cu: cu(need('amount')),
        payee_id: need('payee'),
        ...optional('task-id', 'task_id', String),
        ...optional('proof', 'proof', json),
      };
    case ESCROW_METHOD.reclaim:
      return { op_ref: opRef, escrow_id: escrowId, ...optional('amount', 'amount_cu', cu) };
    case ESCROW_METHOD.claim:
      return {
        op_ref: opRef,
        escrow_id: escrowId,
        amount_cu: cu(need('amount')),
        task_id: need('task-id'),
        proof: json(need('proof')),
        // Ours (docs/acmp-escrow.md "Payout configuration"): the payee's payout list, e.g. `wallet payout`'s output.
        ...optional('payout', 'payout', readPayoutFile),
      };
    case ESCROW_METHOD.dispute:
      return {
        op_ref: opRef,
        escrow_id: escrowId,
        reason: need('reason'),
        ...optional('evidence', 'evidence', json),
      };
    case ESCROW_METHOD.status:
      return { escrow_id: escrowId };
  }
}

/** A CU amount flag (the agent refuses what is not a multiple of 10⁻⁹ CU). */
function cu(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new UsageError(`"${value}" is not an amount of CU`);
  return n;
}

function int(value: string): number {
  if (!/^-?\d+$/.test(value)) throw new UsageError(`"${value}" is not a whole number of milliseconds`);
  return Number(value);
}

function json(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new UsageError('expected a JSON value');
  }
}
