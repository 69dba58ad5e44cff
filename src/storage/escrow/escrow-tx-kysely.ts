import { nextDueOf, type EscrowRecord } from '../../acmp/escrow/record.js';
import type { EscrowTx, OpKey, PayoutConfig, StoredOp } from '../../acmp/escrow/store.js';
import type { EscrowEvent, Payout } from '../../acmp/escrow/transitions.js';
import type { SqlDialect } from '../sql/database.js';
import { column, sqlQuery, type BoundSql, type Query } from '../sql/query.js';
import {
  decodeBig,
  decodeEscrowRow,
  decodeOpRow,
  decodePayoutConfigRow,
  decodePayoutRow,
  encodeJson,
  ESCROW_COLUMNS,
} from './escrow-rows.js';

/** The reads of one escrow transaction, each with its row decoder; `lock` ends each locking read. */
function txQueries(lock: string) {
  return {
    balance: sqlQuery(
      `SELECT balance FROM escrow_accounts WHERE tenant = $1 AND account = $2${lock}`,
      column('balance', decodeBig),
    ),
    escrow: sqlQuery(`SELECT ${ESCROW_COLUMNS} FROM escrows WHERE escrow_id = $1${lock}`, decodeEscrowRow),
    op: sqlQuery(
      `SELECT * FROM escrow_ops WHERE tenant = $1 AND party = $2 AND method = $3 AND scope = $4 AND op_ref = $5`,
      decodeOpRow,
    ),
    payoutConfig: sqlQuery(
      `SELECT * FROM escrow_payout_configs WHERE tenant = $1 AND party = $2${lock}`,
      decodePayoutConfigRow,
    ),
    heldPayouts: sqlQuery(
      `SELECT * FROM escrow_payouts WHERE tenant = $1 AND account = $2 AND route = 'held' AND paid_at IS NULL ORDER BY created_at, payout_id${lock}`,
      decodePayoutRow,
    ),
  } satisfies Record<string, Query<unknown>>;
}

const LOCKING = { postgres: txQueries(' FOR UPDATE'), sqlite: txQueries('') };

/** The PostgreSQL channel escrow change signals travel on (payload: the escrow id). */
export const ESCROW_SIGNAL_CHANNEL = 'escrow_signals';

/**
 * One transaction of {@link KyselyEscrowStore}: `run` executes on the transaction's connection. Reads of
 * an escrow or an account lock the row (`FOR UPDATE` on PostgreSQL; SQLite's transaction already holds
 * the write lock). A written escrow is noted in `changed` and, on PostgreSQL, signalled by a NOTIFY that
 * is delivered on commit.
 */
export class KyselyEscrowTx implements EscrowTx {
  private readonly q: ReturnType<typeof txQueries>;

  constructor(
    private readonly dialect: SqlDialect,
    private readonly sql: BoundSql,
    private readonly changed: Set<string>,
  ) {
    this.q = LOCKING[dialect];
  }

  async account(tenant: string, account: string): Promise<bigint> {
    await this.sql.exec(
      `INSERT INTO escrow_accounts (tenant, account, balance, credited) VALUES ($1, $2, 0, 0) ON CONFLICT (tenant, account) DO NOTHING`,
      [tenant, account],
    );
    return (await this.sql.first(this.q.balance, [tenant, account])) ?? 0n;
  }

  async setBalance(tenant: string, account: string, balance: bigint): Promise<void> {
    await this.sql.exec(`UPDATE escrow_accounts SET balance = $3 WHERE tenant = $1 AND account = $2`, [
      tenant,
      account,
      balance,
    ]);
  }

  async escrow(escrowId: string): Promise<EscrowRecord | undefined> {
    return this.sql.first(this.q.escrow, [escrowId]);
  }

  insertEscrow(record: EscrowRecord): Promise<void> {
    return this.write(record, true);
  }

  updateEscrow(record: EscrowRecord): Promise<void> {
    return this.write(record, false);
  }

  async op(key: OpKey): Promise<StoredOp | undefined> {
    return this.sql.first(this.q.op, opKeyValues(key));
  }

  async putOp(op: StoredOp): Promise<void> {
    await this.sql.exec(
      `INSERT INTO escrow_ops (tenant, party, method, scope, op_ref, params_hash, outcome, escrow_id, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [...opKeyValues(op.key), op.paramsHash, JSON.stringify(op.outcome), op.escrowId, op.at],
    );
  }

  async addPayouts(payouts: readonly Payout[]): Promise<void> {
    for (const p of payouts) {
      await this.sql.exec(
        `INSERT INTO escrow_payouts (payout_id, escrow_id, tenant, account, amount, kind, created_at, route) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (payout_id) DO NOTHING`,
        [p.payoutId, p.escrowId, p.tenant, p.account, p.amount, p.kind, p.at, p.route],
      );
    }
  }

  async payoutConfig(tenant: string, party: string): Promise<PayoutConfig | undefined> {
    return this.sql.first(this.q.payoutConfig, [tenant, party]);
  }

  async setPayoutConfig(c: PayoutConfig): Promise<void> {
    await this.sql.exec(
      `INSERT INTO escrow_payout_configs (tenant, party, payout, set_by, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, party) DO UPDATE SET payout = excluded.payout, set_by = excluded.set_by, at = excluded.at`,
      [c.tenant, c.party, JSON.stringify(c.payout), c.setBy, c.at],
    );
  }

  async heldPayouts(tenant: string, party: string): Promise<Payout[]> {
    return this.sql.rows(this.q.heldPayouts, [tenant, party]);
  }

  async routePayout(payoutId: string, account: string, route: 'identity' | 'configured'): Promise<void> {
    await this.sql.exec(
      `UPDATE escrow_payouts SET account = $2, route = $3 WHERE payout_id = $1 AND route = 'held' AND paid_at IS NULL`,
      [payoutId, account, route],
    );
  }

  async addEvents(events: readonly EscrowEvent[]): Promise<void> {
    for (const e of events) {
      await this.sql.exec(
        `INSERT INTO escrow_events (escrow_id, seq, kind, actor, at, data) VALUES ($1, $2, $3, $4, $5, $6)`,
        [e.escrowId, e.seq, e.kind, e.actor, e.at, encodeJson(e.data)],
      );
    }
  }

  private async write(record: EscrowRecord, insert: boolean): Promise<void> {
    const values = escrowValues(record);
    if (insert) {
      await this.sql.exec(
        `INSERT INTO escrows (${ESCROW_COLUMNS}, next_due_at) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
        values,
      );
    } else {
      const sets = ESCROW_COLUMNS.split(', ')
        .slice(1)
        .map((c, i) => `${c} = $${i + 2}`);
      await this.sql.exec(
        `UPDATE escrows SET ${sets.join(', ')}, next_due_at = $${values.length} WHERE escrow_id = $1`,
        values,
      );
    }
    if (this.dialect === 'postgres')
      await this.sql.exec(`SELECT pg_notify('${ESCROW_SIGNAL_CHANNEL}', $1)`, [record.escrowId]);
    this.changed.add(record.escrowId);
  }
}

function opKeyValues(key: OpKey): unknown[] {
  return [key.tenant, key.party, key.method, key.scope, key.opRef];
}

/** The row values of a record in {@link ESCROW_COLUMNS} order, then `next_due_at`. */
function escrowValues(r: EscrowRecord): unknown[] {
  return [
    r.escrowId,
    r.tenant,
    r.buyer,
    r.buyerDid,
    r.payee,
    r.contextId,
    r.state,
    r.locked,
    r.released,
    r.reclaimed,
    r.validUntil,
    r.challengeWindowMs,
    r.agreedPrice,
    r.tier,
    r.claim && encodeJson(r.claim),
    r.dispute && encodeJson(r.dispute),
    JSON.stringify(r.claimedTasks),
    r.settled ? 1 : 0,
    r.expired ? 1 : 0,
    r.seq,
    r.payeeRoute && JSON.stringify(r.payeeRoute),
    r.createdAt,
    r.updatedAt,
    nextDueOf(r),
  ];
}
