import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { formatCu, parseCu } from '../acmp/escrow/amounts.js';
import { errorCode, LocalError } from '../shared/errors.js';
import { frozenPayout, payoutOf, PayoutSchema, type PayoutRail } from './payout.js';

/*
 * The operator's spend limits (Layer 7 §1 item 2, §6.2), read from a file the operator owns
 * (docs/acmp-wallet.md "Limits"). Amounts are exact nano-CU (the escrow code's unit, amounts.ts).
 */

/** How `total_cap_cu` is counted: over the wallet's lifetime, or per UTC calendar day or month. */
export type CapPeriod = 'lifetime' | 'day' | 'month';

/** One set of limits (the wallet's, or one counterparty's); an absent limit is not enforced. */
export interface LimitSet {
  readonly totalCap?: bigint;
  readonly capPeriod: CapPeriod;
  readonly ratePerHour?: bigint;
  readonly perTaskMax?: bigint;
}

/** Everything the operator's file says, frozen. */
export interface WalletConfig {
  /** The wallet every process sharing its store spends from (L7 §2.4 fleets). */
  readonly walletId: string;
  /** Where the wallet's records live (`sqlite:<file>` or `postgres://…`); the file's folder by default. */
  readonly store: string;
  readonly limits: LimitSet;
  /** Limits that apply to spends with one counterparty, in addition to the wallet's (AND). */
  readonly counterparties: ReadonlyMap<string, LimitSet>;
  /** Where the owner wants to be paid, in order of preference (Layer 7 §6.4); empty when not said. */
  readonly payout: readonly PayoutRail[];
  /** Where the configuration came from (a path), for messages. */
  readonly source: string;
}

const Cu = z.number().nonnegative();
const LimitSetSchema = z.strictObject({
  total_cap_cu: Cu.optional(),
  total_cap_period: z.enum(['lifetime', 'day', 'month']).optional(),
  rate_cu_per_hour: Cu.optional(),
  per_task_max_cu: Cu.optional(),
});
// Strict: a misspelt limit ("per_task_cu") must fail loudly, not silently leave a spend unbounded.
const WalletFileSchema = z.strictObject({
  wallet_id: z.string().min(1).max(128),
  store: z.string().min(1).optional(),
  limits: LimitSetSchema,
  counterparties: z.record(z.string().min(1).max(200), LimitSetSchema).optional(),
  payout: PayoutSchema.optional(),
});

/**
 * Parses a wallet file's JSON value into a frozen {@link WalletConfig}.
 * @throws LocalError `CONFIG_INVALID` naming the field (unknown fields, negative or non-exact amounts).
 */
export function parseWalletConfig(value: unknown, source: string): WalletConfig {
  const parsed = WalletFileSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') ?? '';
    throw new LocalError(
      'CONFIG_INVALID',
      `wallet limits ${source}: ${path === '' ? '' : `${path}: `}${issue?.message ?? 'invalid'}`,
    );
  }
  const file = parsed.data;
  const counterparties = new Map<string, LimitSet>();
  for (const [id, set] of Object.entries(file.counterparties ?? {}))
    counterparties.set(id, limitSet(set, `${source} counterparties.${id}`));
  return Object.freeze({
    walletId: file.wallet_id,
    store: file.store ?? `sqlite:${join(dirname(resolve(source)), `${file.wallet_id}.wallet.sqlite`)}`,
    limits: limitSet(file.limits, `${source} limits`),
    counterparties: new FrozenMap(counterparties),
    payout: payoutOf(file.payout, source),
    source,
  });
}

/**
 * Reads the operator's wallet file. Like the host's tokens file it must not be writable by group or
 * others (POSIX modes; not checked on Windows): whoever can write it can raise the limits.
 * @throws LocalError `CONFIG_INVALID` for an unreadable, group/other-writable or malformed file.
 */
export function loadWalletConfig(path: string): WalletConfig {
  let text: string;
  try {
    const mode = statSync(path).mode;
    if (process.platform !== 'win32' && (mode & 0o022) !== 0)
      throw new LocalError(
        'CONFIG_INVALID',
        `wallet limits file ${path} is writable by group or others: chmod go-w ${path}`,
      );
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof LocalError) throw error;
    const code = errorCode(error);
    throw new LocalError(
      'CONFIG_INVALID',
      `cannot read wallet limits file ${path}${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LocalError('CONFIG_INVALID', `wallet limits file ${path} is not JSON`);
  }
  return parseWalletConfig(json, path);
}

/** A limit set as the operator wrote it (CU numbers), for `wallet status`. */
export function describeLimits(set: LimitSet): Record<string, number | string> {
  return {
    ...(set.totalCap === undefined ? {} : { total_cap_cu: formatCu(set.totalCap) }),
    total_cap_period: set.capPeriod,
    ...(set.ratePerHour === undefined ? {} : { rate_cu_per_hour: formatCu(set.ratePerHour) }),
    ...(set.perTaskMax === undefined ? {} : { per_task_max_cu: formatCu(set.perTaskMax) }),
  };
}

function limitSet(set: z.infer<typeof LimitSetSchema>, where: string): LimitSet {
  const nano = (cu: number | undefined, field: string): bigint | undefined => {
    if (cu === undefined) return undefined;
    const parsed = parseCu(cu);
    if (!parsed.ok)
      throw new LocalError('CONFIG_INVALID', `wallet limits ${where}.${field}: ${parsed.reason}`);
    return parsed.nano;
  };
  const totalCap = nano(set.total_cap_cu, 'total_cap_cu');
  const ratePerHour = nano(set.rate_cu_per_hour, 'rate_cu_per_hour');
  const perTaskMax = nano(set.per_task_max_cu, 'per_task_max_cu');
  return Object.freeze({
    capPeriod: set.total_cap_period ?? 'lifetime',
    ...(totalCap === undefined ? {} : { totalCap }),
    ...(ratePerHour === undefined ? {} : { ratePerHour }),
    ...(perTaskMax === undefined ? {} : { perTaskMax }),
  });
}

/** An independent, frozen copy: changing the object it was made from changes nothing. */
export function freezeConfig(config: WalletConfig): WalletConfig {
  const copy = (set: LimitSet): LimitSet =>
    Object.freeze({
      capPeriod: set.capPeriod,
      ...(set.totalCap === undefined ? {} : { totalCap: set.totalCap }),
      ...(set.ratePerHour === undefined ? {} : { ratePerHour: set.ratePerHour }),
      ...(set.perTaskMax === undefined ? {} : { perTaskMax: set.perTaskMax }),
    });
  const counterparties = new Map<string, LimitSet>();
  for (const [id, set] of config.counterparties) counterparties.set(id, copy(set));
  return Object.freeze({
    walletId: config.walletId,
    store: config.store,
    limits: copy(config.limits),
    counterparties: new FrozenMap(counterparties),
    payout: frozenPayout(config.payout),
    source: config.source,
  });
}

/** A map whose mutators throw: the limits are read-only to whoever holds the configuration. */
class FrozenMap<K, V> extends Map<K, V> {
  #sealed = false;
  constructor(entries: Map<K, V>) {
    super();
    for (const [key, value] of entries) super.set(key, value);
    this.#sealed = true;
    Object.freeze(this);
  }
  override set(key: K, value: V): this {
    if (this.#sealed) throw new TypeError('wallet limits are read-only');
    return super.set(key, value);
  }
  override delete(): boolean {
    throw new TypeError('wallet limits are read-only');
  }
  override clear(): void {
    throw new TypeError('wallet limits are read-only');
  }
}
