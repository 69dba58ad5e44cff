import { parseArgs } from 'node:util';
import { createEscrowClient } from '../a2a/escrow/client.js';
import { walletEscrowClient } from '../a2a/escrow/wallet-client.js';
import { formatCu } from '../acmp/escrow/amounts.js';
import { openWallet, type OpenWallet } from '../connect/wallet.js';
import { describeLimits } from '../wallet/limits.js';
import { AUDIT_KINDS, type AuditEntry, type AuditKind } from '../wallet/store.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { UsageError, type CliIo } from './io.js';

/** The variable naming the operator's wallet file when `--wallet-limits` is not given. */
const WALLET_ENV = 'A2AC_WALLET_LIMITS';

export const WALLET_USAGE = `Usage (the operator; the wallet file from --wallet-limits <file> | ${WALLET_ENV}):
  a2a-commerce wallet log     [--kind <kind>] [--counterparty <id>] [--since <ISO time | 30m | 2h | 1d>] [--json]
  a2a-commerce wallet status  [--token <t>] [--data-dir <dir> | --ca <pem>] [--json]
  a2a-commerce wallet recover <escrow-agent-url> [--token <t>] [--data-dir <dir> | --ca <pem>]
  a2a-commerce wallet payout

log      the append-only audit log (Layer 7 §6.3), oldest first: one line per entry, or JSON lines.
status   the limits, what is spent this period and this hour and the headroom left under each limit, and
         the escrows the wallet funded with what remains in each at its agent (asked where reachable).
recover  replays the operations a crashed buyer left unanswered at that agent, with their op_refs.
payout   prints where the owner wants to be paid ({"payout": [...]}, Layer 7 §6.4), to register with an
         escrow agent.
The buyer verbs (acmp invoke, escrow lock|bind|release|reclaim|dispute) spend through the wallet when
--wallet-limits or ${WALLET_ENV} names one (docs/acmp-wallet.md).`;

const OPTIONS = {
  'wallet-limits': { type: 'string' },
  kind: { type: 'string' },
  counterparty: { type: 'string' },
  since: { type: 'string' },
  json: { type: 'boolean' },
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  ca: { type: 'string' },
} as const;

const KINDS: readonly AuditKind[] = AUDIT_KINDS;

/** The wallet the flags or the environment name, opened; undefined when none is named. */
export async function walletFromFlags(
  values: { 'wallet-limits'?: string | undefined },
  env: Record<string, string | undefined>,
): Promise<OpenWallet | undefined> {
  const file = values['wallet-limits'] ?? (env[WALLET_ENV] || undefined);
  return file === undefined ? undefined : openWallet({ limitsFile: file });
}

/** `a2a-commerce wallet <log|status|recover|payout> …`. */
export async function wallet(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: OPTIONS, allowPositionals: true });
  if (sub !== 'log' && sub !== 'status' && sub !== 'recover' && sub !== 'payout')
    throw new UsageError(
      sub === undefined ? 'wallet needs a subcommand' : `unknown wallet subcommand "${sub}"`,
    );
  const open = await walletFromFlags(values, io.env);
  if (!open) throw new UsageError(`name the wallet file with --wallet-limits or ${WALLET_ENV}`);
  try {
    if (sub === 'log') return await log(open, values, io);
    if (sub === 'payout') {
      io.out(JSON.stringify({ payout: open.wallet.config.payout }, null, 2));
      return 0;
    }
    const connect = { token: tokenFromFlags(values, io.env), caCert: caFromFlags(values, io.env) };
    if (sub === 'status') return await status(open, { ...values, connect }, io);
    const [url] = positionals;
    if (!url || !/^https?:\/\//.test(url)) throw new UsageError('recover needs an <escrow-agent-url>');
    const client = await walletEscrowClient(
      await createEscrowClient({ agentUrl: url, ...connect }),
      open.wallet,
    );
    io.out(JSON.stringify(client.recovered, null, 2));
    return client.recovered.some((r) => r.outcome === 'pending') ? 1 : 0;
  } finally {
    await open.close();
  }
}

async function log(
  open: OpenWallet,
  values: { kind?: string; counterparty?: string; since?: string; json?: boolean },
  io: CliIo,
): Promise<number> {
  const kind = values.kind === undefined ? undefined : KINDS.find((k) => k === values.kind);
  if (values.kind !== undefined && kind === undefined)
    throw new UsageError(`--kind is one of ${KINDS.join(', ')}`);
  const entries = await open.wallet.log({
    limit: 100_000,
    ...(kind === undefined ? {} : { kind }),
    ...(values.counterparty === undefined ? {} : { counterparty: values.counterparty }),
    ...(values.since === undefined ? {} : { sinceMs: sinceOf(values.since, Date.now()) }),
  });
  for (const entry of entries) io.out(values.json ? JSON.stringify(entryJson(entry)) : entryLine(entry));
  return 0;
}

async function status(
  open: OpenWallet,
  values: { json?: boolean; connect: { token?: string | undefined; caCert?: string | undefined } },
  io: CliIo,
): Promise<number> {
  const { wallet: w } = open;
  const escrows = [];
  for (const held of await w.held()) {
    let remaining: number | string = 'unreachable';
    try {
      const client = await createEscrowClient({ agentUrl: held.agent, ...values.connect, timeoutMs: 5_000 });
      const s = await client.status(held.escrowId);
      remaining = s.state === 'closed' ? 0 : s.remaining_cu;
    } catch {
      // An agent that cannot be asked leaves the wallet's own count standing.
    }
    escrows.push({
      escrow_id: held.escrowId,
      agent: held.agent,
      funded_cu: formatCu(held.amount),
      remaining_cu: remaining,
    });
  }
  const report = {
    wallet_id: w.id,
    store: open.location,
    limits: describeLimits(w.config.limits),
    counterparty_limits: Object.fromEntries(
      [...w.config.counterparties].map(([id, set]) => [id, describeLimits(set)]),
    ),
    headroom: await w.headroom(),
    payout: w.config.payout,
    pending_operations: (await w.pending()).length,
    escrows,
  };
  io.out(values.json ? JSON.stringify(report) : JSON.stringify(report, null, 2));
  return 0;
}

/** Milliseconds per unit of a `--since` duration. */
const UNIT_MS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `--since`: an ISO time, or a duration back from now (`30m`, `2h`, `1d`). */
export function sinceOf(value: string, now: number): number {
  const relative = /^(\d+)(s|m|h|d)$/.exec(value);
  const unit = relative?.[2] === undefined ? undefined : UNIT_MS[relative[2]];
  if (relative && unit !== undefined) return now - Number(relative[1]) * unit;
  const at = Date.parse(value);
  if (Number.isNaN(at)) throw new UsageError(`--since "${value}" is neither an ISO time nor 30m, 2h, 1d`);
  return at;
}

function entryJson(e: AuditEntry): Record<string, unknown> {
  return {
    ts_ms: e.tsMs,
    kind: e.kind,
    amount_cu: e.amount === null ? null : formatCu(e.amount),
    tier: e.tier,
    counterparty: e.counterparty,
    escrow_id: e.escrowId,
    task_id: e.taskId,
    op_ref: e.opRef,
    outcome: e.outcome,
    ...(e.detail === null ? {} : { detail: e.detail }),
  };
}

/** One audit entry as a line of `wallet log`. */
export function entryLine(e: AuditEntry): string {
  const amount = e.amount === null ? '-' : `${formatCu(e.amount)} CU`;
  const fields = [
    new Date(e.tsMs).toISOString(),
    e.kind.padEnd(8),
    amount.padStart(14),
    e.outcome,
    e.counterparty && `counterparty=${e.counterparty}`,
    e.escrowId && `escrow=${e.escrowId}`,
    e.taskId && `task=${e.taskId}`,
    e.opRef && `op_ref=${e.opRef}`,
  ];
  return fields.filter(Boolean).join('  ');
}
