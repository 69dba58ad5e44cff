import { formatCu } from '../../acmp/escrow/amounts.js';
import { remainingOf, type EscrowRecord } from '../../acmp/escrow/record.js';
import type { Database } from '../../storage/sql/database.js';
import { decodeEscrowRow, ESCROW_COLUMNS } from '../../storage/escrow/escrow-rows.js';
import { KyselyEscrowStore } from '../../storage/escrow/escrow-store-kysely.js';
import { num } from './tables.js';

/** One escrow as the escrow page lists it; amounts in CU. */
export interface ConsoleEscrow {
  readonly escrowId: string;
  readonly tenant: string;
  readonly buyer: string;
  readonly payee: string | null;
  readonly state: EscrowRecord['state'];
  readonly lockedCu: number;
  readonly releasedCu: number;
  readonly reclaimedCu: number;
  readonly heldCu: number;
  readonly validUntil: number;
  /** The pending claim: its amount and when its challenge window ends (L4 §4.5). */
  readonly claim: { amountCu: number; taskId: string; windowEndsAt: number } | null;
  readonly dispute: { reason: string; deadlineAt: number; resolved: boolean } | null;
  readonly updatedAt: number;
}

/** The escrow page: accounts, escrows, and the ledger conservation line (docs/acmp-escrow.md). */
export interface EscrowView {
  readonly accounts: { tenant: string; account: string; balanceCu: number; creditedCu: number }[];
  readonly escrows: ConsoleEscrow[];
  readonly totals: { balancesCu: number; heldCu: number; pendingCu: number; creditedCu: number };
  /** balances + held + pending payouts = credited: nothing created or lost. */
  readonly conserved: boolean;
}

function consoleEscrow(record: EscrowRecord, updatedAt: number): ConsoleEscrow {
  const claim = record.claim;
  const dispute = record.dispute;
  return {
    escrowId: record.escrowId,
    tenant: record.tenant,
    buyer: record.buyer,
    payee: record.payee,
    state: record.state,
    lockedCu: formatCu(record.locked),
    releasedCu: formatCu(record.released),
    reclaimedCu: formatCu(record.reclaimed),
    heldCu: formatCu(remainingOf(record)),
    validUntil: record.validUntil,
    claim: claim && {
      amountCu: formatCu(claim.amount),
      taskId: claim.taskId,
      windowEndsAt: claim.windowEndsAt,
    },
    dispute: dispute && {
      reason: dispute.reason,
      deadlineAt: dispute.deadlineAt,
      resolved: dispute.resolution !== null,
    },
    updatedAt,
  };
}

/** Reads the escrow agent's ledger: every account, the newest escrows, and the totals. */
export async function readEscrow(database: Database, limit: number): Promise<EscrowView> {
  const accounts = (await database.db
    .selectFrom('escrow_accounts')
    .select(['tenant', 'account', 'balance', 'credited'])
    .orderBy('account')
    .limit(limit)
    .execute()) as Record<string, unknown>[];
  const rows = (await database.db
    .selectFrom('escrows')
    .select(ESCROW_COLUMNS.split(', '))
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute()) as Record<string, unknown>[];
  const t = await new KyselyEscrowStore(database).totals();
  return {
    accounts: accounts.map((a) => ({
      tenant: String(a.tenant),
      account: String(a.account),
      balanceCu: formatCu(BigInt(num(a.balance))),
      creditedCu: formatCu(BigInt(num(a.credited))),
    })),
    escrows: rows.map((row) => consoleEscrow(decodeEscrowRow(row), num(row.updated_at))),
    totals: {
      balancesCu: formatCu(t.balances),
      heldCu: formatCu(t.remaining),
      pendingCu: formatCu(t.pending),
      creditedCu: formatCu(t.credits),
    },
    conserved: t.balances + t.remaining + t.pending === t.credits,
  };
}
