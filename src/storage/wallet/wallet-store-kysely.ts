import { z } from 'zod';
import { RATE_WINDOW_MS, type Usage, type UsageScopes } from '../../wallet/check.js';
import type {
  Admission,
  Admitted,
  AuditEntry,
  AuditQuery,
  Completion,
  Intent,
  UsageQuery,
  WalletStore,
} from '../../wallet/store.js';
import type { Database, SqlDialect } from '../sql/database.js';
import { decodeBig } from '../escrow/escrow-rows.js';
import { bindSql, column, sqlQuery, SqlRunner, text, type BoundSql, type SqlKysely } from '../sql/query.js';
import { decodeAuditRow, decodeIntentRow } from './wallet-rows.js';

export { walletMigrations } from './wallet-migrations.js';

const PENDING = sqlQuery(
  `SELECT * FROM wallet_intents WHERE wallet_id = $1 AND state = 'pending' ORDER BY created_ms, op_ref`,
  decodeIntentRow,
);
const CLOSE_INTENT = sqlQuery(
  `UPDATE wallet_intents SET state = $3 WHERE wallet_id = $1 AND op_ref = $2 AND state = 'pending' RETURNING op_ref`,
  column('op_ref', text),
);
const REJOIN = sqlQuery(
  `SELECT spend_id, amount FROM wallet_spends WHERE wallet_id = $1 AND kind = 'invoke' AND counterparty = $2
       AND task_id = $3 AND state <> 'void' ORDER BY at_ms, spend_id LIMIT 1`,
  (row) => ({ spendId: column('spend_id', text)(row), amount: column('amount', decodeBig)(row) }),
);
const HELD = sqlQuery(
  `SELECT s.escrow_id AS escrow_id, MAX(i.agent) AS agent, SUM(s.amount) AS amount
       FROM wallet_spends s LEFT JOIN wallet_intents i ON i.wallet_id = s.wallet_id AND i.spend_id = s.spend_id
       WHERE s.wallet_id = $1 AND s.escrow_id IS NOT NULL AND s.state = 'settled'
       GROUP BY s.escrow_id ORDER BY s.escrow_id`,
  (row) => ({
    escrowId: column('escrow_id', text)(row),
    agent: column('agent', (v) => z.string().nullable().parse(v) ?? '')(row),
    amount: column('amount', decodeBig)(row),
  }),
);

/**
 * {@link WalletStore} on SQLite or PostgreSQL. Every write is one transaction serialised per wallet
 * across processes — on PostgreSQL by a transaction-scoped advisory lock on the wallet id, on SQLite by
 * `BEGIN IMMEDIATE` (the database's write lock) — so usage read and spend written cannot interleave with
 * another admission: concurrent spends at the cap never overshoot it.
 */
export class KyselyWalletStore implements WalletStore {
  private readonly db: SqlKysely;
  private readonly dialect: SqlDialect;
  private readonly sql: SqlRunner;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.sql = new SqlRunner(database.dialect);
  }

  admit(a: Admission): Promise<Admitted> {
    return this.locked(a.query.walletId, async (run): Promise<Admitted> => {
      // Under the wallet's lock, so a concurrent first send of the task is seen or sees this one.
      const rejoined =
        a.rejoin && (await run.first(REJOIN, [a.query.walletId, a.rejoin.counterparty, a.rejoin.taskId]));
      if (rejoined) return { breaches: [], rejoined };
      const breaches = a.decide(await usageOf(run, a.query));
      if (breaches.length > 0) {
        await insertAudit(run, a.denied(breaches));
        return { breaches };
      }
      if (a.spend) {
        const s = a.spend;
        await run.exec(
          `INSERT INTO wallet_spends (spend_id, wallet_id, kind, counterparty, task_id, escrow_id, op_ref, amount, at_ms, counted_ms, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            s.spendId,
            s.walletId,
            s.kind,
            s.counterparty,
            s.taskId,
            s.escrowId,
            s.opRef,
            s.amount,
            s.atMs,
            s.countedMs,
            s.state,
          ],
        );
      }
      if (a.intent) {
        const i = a.intent;
        await run.exec(
          `INSERT INTO wallet_intents (wallet_id, op_ref, method, agent, escrow_id, params, spend_id, counterparty, task_id, state, created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            i.walletId,
            i.opRef,
            i.method,
            i.agent,
            i.escrowId,
            JSON.stringify(i.params),
            i.spendId,
            i.counterparty,
            i.taskId,
            i.state,
            i.createdMs,
          ],
        );
      }
      return { breaches: [] };
    });
  }

  finish(c: Completion): Promise<boolean> {
    return this.locked(c.walletId, async (run) => {
      if (c.opRef !== undefined) {
        const closed = await run.rows(CLOSE_INTENT, [c.walletId, c.opRef, c.intentState ?? 'done']);
        if (closed.length === 0) return false;
      }
      if (c.spend)
        await run.exec(
          `UPDATE wallet_spends SET state = $2, amount = COALESCE($3, amount), escrow_id = COALESCE($4, escrow_id) WHERE spend_id = $1`,
          [c.spend.spendId, c.spend.state, c.spend.amount ?? null, c.spend.escrowId ?? null],
        );
      if (c.refund) {
        const r = c.refund;
        // Counted where the escrow's lock was: a refund gives back the period the money was spent in.
        await run.exec(
          `INSERT INTO wallet_spends (spend_id, wallet_id, kind, counterparty, task_id, escrow_id, op_ref, amount, at_ms, counted_ms, state)
           SELECT $1, $2, 'refund', COALESCE(MAX(counterparty), ''), NULL, $3, NULL, $4, $5, COALESCE(MAX(counted_ms), $5), 'settled'
           FROM wallet_spends WHERE wallet_id = $2 AND escrow_id = $3 AND kind = 'lock'`,
          [r.spendId, c.walletId, r.escrowId, -r.amount, r.atMs],
        );
      }
      for (const entry of c.audit) await insertAudit(run, entry);
      return true;
    });
  }

  append(entry: AuditEntry): Promise<void> {
    return this.locked(entry.walletId, (run) => insertAudit(run, entry));
  }

  async pending(walletId: string): Promise<Intent[]> {
    return this.sql.rows(this.db, PENDING, [walletId]);
  }

  async audit(walletId: string, q: AuditQuery): Promise<AuditEntry[]> {
    const params: unknown[] = [walletId];
    const next = (v: unknown): string => `$${params.push(v)}`;
    const where = ['wallet_id = $1'];
    if (q.kind !== undefined) where.push(`kind = ${next(q.kind)}`);
    if (q.counterparty !== undefined) where.push(`counterparty = ${next(q.counterparty)}`);
    if (q.sinceMs !== undefined) where.push(`ts_ms >= ${next(q.sinceMs)}`);
    return this.sql.rows(
      this.db,
      sqlQuery(
        `SELECT * FROM wallet_audit WHERE ${where.join(' AND ')} ORDER BY seq LIMIT ${next(q.limit)}`,
        decodeAuditRow,
      ),
      params,
    );
  }

  usage(query: UsageQuery): Promise<UsageScopes> {
    return usageOf(bindSql(this.sql, this.db), query);
  }

  async heldEscrows(walletId: string): Promise<{ escrowId: string; agent: string; amount: bigint }[]> {
    const held = await this.sql.rows(this.db, HELD, [walletId]);
    return held.filter((h) => h.amount > 0n);
  }

  /** Runs `work` in one transaction holding the wallet's lock (see the class comment). */
  private async locked<T>(walletId: string, work: (run: BoundSql) => Promise<T>): Promise<T> {
    if (this.dialect === 'postgres')
      return this.db.transaction().execute(async (trx) => {
        const run = bindSql(this.sql, trx);
        await run.exec(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`a2ac_wallet:${walletId}`]);
        return work(run);
      });
    return this.db.connection().execute(async (conn) => {
      const run = bindSql(this.sql, conn);
      await run.exec('BEGIN IMMEDIATE', []);
      try {
        const value = await work(run);
        await run.exec('COMMIT', []);
        return value;
      } catch (error) {
        await run.exec('ROLLBACK', []).catch(() => undefined);
        throw error;
      }
    });
  }
}

/** The usage sums of Layer 7 §6.2's limits, for the wallet and the counterparty (non-void spends). */
async function usageOf(run: BoundSql, q: UsageQuery): Promise<UsageScopes> {
  const scope = async (extra: string, extraParams: unknown[], start: number): Promise<Usage> => {
    const row = await run.first(usageSums(extra), [
      q.walletId,
      start,
      q.nowMs - RATE_WINDOW_MS,
      q.taskId ?? '',
      ...extraParams,
    ]);
    return {
      period: row?.period ?? 0n,
      hour: row?.hour ?? 0n,
      task: q.taskId === null ? 0n : (row?.task ?? 0n),
    };
  };
  return {
    wallet: await scope('', [], q.periodStart),
    counterparty: await scope(' AND counterparty = $5', [q.counterparty], q.counterpartyPeriodStart),
  };
}

/** The period, hour and task sums of the non-void spends (`extra` narrows them to a counterparty). */
function usageSums(extra: string) {
  return sqlQuery(
    `SELECT
         SUM(CASE WHEN counted_ms >= $2 THEN amount ELSE 0 END) AS period,
         SUM(CASE WHEN amount > 0 AND at_ms >= $3 THEN amount ELSE 0 END) AS hour,
         SUM(CASE WHEN amount > 0 AND task_id = $4 THEN amount ELSE 0 END) AS task
       FROM wallet_spends WHERE wallet_id = $1 AND state <> 'void'${extra}`,
    (row) => ({
      period: column('period', decodeBig)(row),
      hour: column('hour', decodeBig)(row),
      task: column('task', decodeBig)(row),
    }),
  );
}

async function insertAudit(run: BoundSql, e: AuditEntry): Promise<void> {
  // The caller holds the wallet's lock, so the next sequence number is this transaction's alone.
  await run.exec(
    `INSERT INTO wallet_audit (wallet_id, seq, ts_ms, kind, amount, tier, counterparty, escrow_id, task_id, op_ref, outcome, detail)
     SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM wallet_audit WHERE wallet_id = $1`,
    [
      e.walletId,
      e.tsMs,
      e.kind,
      e.amount,
      e.tier,
      e.counterparty,
      e.escrowId,
      e.taskId,
      e.opRef,
      e.outcome,
      e.detail === null ? null : JSON.stringify(e.detail),
    ],
  );
}
