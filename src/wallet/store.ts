import type { JsonValue } from '../shared/json.js';
import type { Breach, UsageScopes } from './check.js';

/*
 * The wallet's storage port (docs/acmp-wallet.md "Store"): spend records the limits count, the
 * append-only audit log (Layer 7 §6.3) and the write-ahead intents of Layer 4 operations (§6.5). Every
 * process sharing a store shares one wallet (§2.4): the limits hold across them.
 */

/** The audit log's kinds: Layer 7 §6.3's, plus ours for invokes, accepts and disputes. */
export const AUDIT_KINDS = [
  'lock',
  'bind',
  'release',
  'reclaim',
  'claim',
  'payout-received',
  'denied',
  'invoke',
  'accept',
  'dispute',
] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** One audit entry (Layer 7 §6.3 fields; amounts in nano-CU). Written once, never updated. */
export interface AuditEntry {
  readonly walletId: string;
  readonly tsMs: number;
  readonly kind: AuditKind;
  readonly amount: bigint | null;
  readonly tier: string | null;
  readonly counterparty: string | null;
  readonly escrowId: string | null;
  readonly taskId: string | null;
  readonly opRef: string | null;
  /** `ok`, `refused:<code>`, `failed:<reason>`, `denied:<limit>[,<limit>]`, `recovered`. */
  readonly outcome: string;
  /** Ours: the denied limits, the operation's error; no personal data. */
  readonly detail: JsonValue | null;
}

/** A spend the limits count (nano-CU): positive for money out, negative for a refund (a reclaim). */
export interface SpendRecord {
  readonly spendId: string;
  readonly walletId: string;
  readonly kind: 'lock' | 'invoke' | 'refund';
  readonly counterparty: string;
  readonly taskId: string | null;
  readonly escrowId: string | null;
  readonly opRef: string | null;
  readonly amount: bigint;
  /** When it was recorded. */
  readonly atMs: number;
  /** When it counts for the cap's period (a refund counts where its lock did). */
  readonly countedMs: number;
  /** `reserved` until the answer; `void` when the operation certainly did not happen. */
  readonly state: 'reserved' | 'settled' | 'void';
}

/** A write-ahead record of one mutating Layer 4 message (Layer 7 §6.5), recorded before it is sent. */
export interface Intent {
  readonly walletId: string;
  readonly opRef: string;
  readonly method: string;
  /** The escrow agent's URL. */
  readonly agent: string;
  readonly escrowId: string | null;
  /** The params as sent, op_ref included: a replay sends exactly these. */
  readonly params: Record<string, JsonValue>;
  /** The spend this operation reserved (a lock). */
  readonly spendId: string | null;
  readonly counterparty: string | null;
  readonly taskId: string | null;
  readonly state: 'pending' | 'done' | 'failed';
  readonly createdMs: number;
}

/** Which spends a usage sum reads. */
export interface UsageQuery {
  readonly walletId: string;
  readonly nowMs: number;
  readonly counterparty: string;
  readonly taskId: string | null;
  /** Period starts of the wallet's and the counterparty's caps. */
  readonly periodStart: number;
  readonly counterpartyPeriodStart: number;
}

/** What {@link WalletStore.admit} writes when the spend passes, and what it logs when it does not. */
export interface Admission {
  readonly query: UsageQuery;
  /** The verdict on the usage read inside the transaction. */
  readonly decide: (usage: UsageScopes) => Breach[];
  readonly spend?: SpendRecord;
  readonly intent?: Intent;
  /** The audit entry of a denial. */
  readonly denied: (breaches: Breach[]) => AuditEntry;
  /**
   * An invoke that may re-send a task id: when the wallet holds a non-void invoke spend of this
   * counterparty and task id, nothing is decided or written and that spend is returned. A provider runs a
   * task id once (Layer 1 §3.1.1), so a re-sent invoke (a resumed DAG node, a retry) is counted once.
   */
  readonly rejoin?: { readonly counterparty: string; readonly taskId: string };
}

/** What {@link WalletStore.admit} did. */
export interface Admitted {
  /** The limits the spend would breach: then only the denial's audit entry was written. */
  readonly breaches: Breach[];
  /** The earlier spend an {@link Admission.rejoin} found (nothing was written). */
  readonly rejoined?: { readonly spendId: string; readonly amount: bigint };
}

/** What {@link WalletStore.finish} records once an operation's answer is known. */
export interface Completion {
  readonly walletId: string;
  /** The intent to close (only if still pending: a second finisher changes nothing). */
  readonly opRef?: string;
  readonly intentState?: 'done' | 'failed';
  readonly spend?: { spendId: string; state: 'settled' | 'void'; amount?: bigint; escrowId?: string };
  /** A reclaim's refund, counted where the escrow's lock was counted. */
  readonly refund?: { spendId: string; escrowId: string; amount: bigint; atMs: number };
  readonly audit: readonly AuditEntry[];
}

/** Filters of the audit log. */
export interface AuditQuery {
  readonly kind?: AuditKind;
  readonly counterparty?: string;
  readonly sinceMs?: number;
  readonly limit: number;
}

/** The wallet's storage (memory, SQLite, PostgreSQL). */
export interface WalletStore {
  /**
   * Reads the usage, decides and writes — one transaction, serialised per wallet across processes (no
   * overshoot under concurrent spends): the spend and intent when nothing is breached, else the denial.
   */
  admit(admission: Admission): Promise<Admitted>;
  /** Closes an intent and a spend and appends the audit entries, atomically. False when already closed. */
  finish(completion: Completion): Promise<boolean>;
  /** Appends one audit entry. */
  append(entry: AuditEntry): Promise<void>;
  /** The wallet's pending intents, oldest first. */
  pending(walletId: string): Promise<Intent[]>;
  /** Audit entries, oldest first. */
  audit(walletId: string, query: AuditQuery): Promise<AuditEntry[]>;
  /** The usage sums of `query` (for `wallet status`). */
  usage(query: UsageQuery): Promise<UsageScopes>;
  /** Escrow ids the wallet locked whose spend was settled and not fully refunded, with their agent. */
  heldEscrows(walletId: string): Promise<{ escrowId: string; agent: string; amount: bigint }[]>;
}
