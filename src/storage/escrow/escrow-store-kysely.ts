import { LocalError } from '../../shared/errors.js';
import type { EscrowRecord } from '../../acmp/escrow/record.js';
import {
  checkRepeatedDeposit,
  type CreditOnce,
  type CreditOutcome,
  type EscrowListQuery,
  type EscrowParty,
  type EscrowStore,
  type EscrowTx,
  type LedgerTotals,
} from '../../acmp/escrow/store.js';
import type { EscrowEvent, Payout } from '../../acmp/escrow/transitions.js';
import { ESCROW_SIGNAL_CHANNEL, KyselyEscrowTx } from './escrow-tx-kysely.js';
import type { Logger } from '../../shared/logger.js';
import { NO_METRICS, type Metrics } from '../../shared/metrics.js';
import { observedCommit } from '../sql/observed-commit.js';
import type { Database, SqlDialect } from '../sql/database.js';
import {
  decodeBig,
  decodeEscrowRow,
  decodeEventRow,
  decodePayoutRow,
  ESCROW_COLUMNS,
} from './escrow-rows.js';
import { RowSignals } from '../sql/row-signals.js';
import {
  bindSql,
  column,
  count,
  sqlQuery,
  SqlRunner,
  text,
  type SqlExecutor,
  type SqlKysely,
} from '../sql/query.js';

export { ESCROW_OWNER_COLUMNS, escrowMigrations } from './escrow-migrations.js';

type Db = SqlExecutor;

const GET = sqlQuery(`SELECT ${ESCROW_COLUMNS} FROM escrows WHERE escrow_id = $1`, decodeEscrowRow);
const DUE = sqlQuery(
  `SELECT escrow_id FROM escrows WHERE next_due_at IS NOT NULL AND next_due_at <= $1 ORDER BY next_due_at LIMIT $2`,
  column('escrow_id', text),
);
const PENDING_PAYOUTS = sqlQuery(
  `SELECT * FROM escrow_payouts WHERE paid_at IS NULL AND route <> 'held' ORDER BY created_at, payout_id LIMIT $1`,
  decodePayoutRow,
);
const MARK_PAID = sqlQuery(
  `UPDATE escrow_payouts SET paid_at = $2 WHERE payout_id = $1 AND paid_at IS NULL AND route <> 'held' RETURNING tenant, account, amount`,
  (row) => ({
    tenant: column('tenant', text)(row),
    account: column('account', text)(row),
    amount: column('amount', decodeBig)(row),
  }),
);
const INSERT_CREDIT = sqlQuery(
  `INSERT INTO escrow_credits (tenant, ref, account, amount, at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant, ref) DO NOTHING RETURNING ref`,
  column('ref', text),
);
const CREDIT = sqlQuery(
  `SELECT account, amount FROM escrow_credits WHERE tenant = $1 AND ref = $2`,
  (row) => ({ account: column('account', text)(row), amount: column('amount', decodeBig)(row) }),
);
const BALANCE = sqlQuery(
  `SELECT balance FROM escrow_accounts WHERE tenant = $1 AND account = $2`,
  column('balance', decodeBig),
);
const ADD_BALANCE = sqlQuery(
  `UPDATE escrow_accounts SET balance = balance + $3, credited = credited + $4 WHERE tenant = $1 AND account = $2 RETURNING balance`,
  column('balance', decodeBig),
);
const sum = (statement: string) => sqlQuery(statement, column('v', decodeBig));
const TOTALS = {
  balances: sum(`SELECT SUM(balance) AS v FROM escrow_accounts`),
  credits: sum(`SELECT SUM(credited) AS v FROM escrow_accounts`),
  remaining: sum(`SELECT SUM(locked - released - reclaimed) AS v FROM escrows`),
  pending: sum(`SELECT SUM(amount) AS v FROM escrow_payouts WHERE paid_at IS NULL`),
};
const EVENTS = sqlQuery(`SELECT * FROM escrow_events WHERE escrow_id = $1 ORDER BY seq`, decodeEventRow);

/**
 * {@link EscrowStore} on SQLite or PostgreSQL, each statement written once with `$n` placeholders. A
 * transaction locks what it reads: on PostgreSQL `SELECT … FOR UPDATE` on the escrow or account row, so
 * operations on one escrow are serial across hosts; on SQLite `BEGIN IMMEDIATE` takes the database's write
 * lock for the whole transaction (also against other processes, e.g. the operator CLI). A changed escrow
 * is signalled by a NOTIFY in the same transaction on PostgreSQL (delivered on commit to every host) and
 * in this process after commit on both.
 */
export class KyselyEscrowStore implements EscrowStore {
  private readonly db: SqlKysely;
  private readonly dialect: SqlDialect;
  private readonly sql: SqlRunner;
  private readonly signals: RowSignals;
  private readonly metrics: Metrics;

  constructor(
    database: Pick<Database, 'db' | 'dialect' | 'url' | 'listens'>,
    options: { logger?: Logger; metrics?: Metrics } = {},
  ) {
    this.db = database.db;
    this.dialect = database.dialect;
    this.sql = new SqlRunner(database.dialect);
    this.metrics = options.metrics ?? NO_METRICS;
    this.signals = new RowSignals(database, { channel: ESCROW_SIGNAL_CHANNEL, ...options });
  }

  async open(): Promise<void> {
    await this.signals.open();
  }

  async close(): Promise<void> {
    await this.signals.close();
  }

  /** One escrow transaction, in one observed commit (docs/operations.md "Tracing", "Metrics"). */
  transaction<T>(work: (tx: EscrowTx) => Promise<T>): Promise<T> {
    return this.withTx((db, changed) => work(this.tx(db, changed)));
  }

  /** Runs `work` on one connection inside one transaction, then signals the escrows it changed. */
  private async withTx<T>(work: (db: Db, changed: Set<string>) => Promise<T>): Promise<T> {
    const changed = new Set<string>();
    const result = await observedCommit(this.metrics, { operation: 'escrow', dialect: this.dialect }, () =>
      this.dialect === 'postgres'
        ? this.db.transaction().execute((trx) => work(trx, changed))
        : this.db.connection().execute(async (conn) => {
            await this.sql.exec(conn, 'BEGIN IMMEDIATE', []);
            try {
              const value = await work(conn, changed);
              await this.sql.exec(conn, 'COMMIT', []);
              return value;
            } catch (error) {
              await this.sql.exec(conn, 'ROLLBACK', []).catch(() => undefined);
              throw error;
            }
          }),
    );
    for (const id of changed) this.signal(id);
    return result;
  }

  private tx(db: Db, changed: Set<string>): EscrowTx {
    return new KyselyEscrowTx(this.dialect, bindSql(this.sql, db), changed);
  }

  async get(escrowId: string): Promise<EscrowRecord | undefined> {
    return this.sql.first(this.db, GET, [escrowId]);
  }

  async list(
    party: EscrowParty,
    query: EscrowListQuery,
  ): Promise<{ records: EscrowRecord[]; total: number }> {
    const params: unknown[] = [party.tenant, party.identity];
    const next = (value: unknown): string => `$${params.push(value)}`;
    const where = ['tenant = $1', '(buyer = $2 OR payee = $2)'];
    if (query.closed !== undefined) where.push(query.closed ? `state = 'closed'` : `state <> 'closed'`);
    if (query.contextId !== undefined) where.push(`context_id = ${next(query.contextId)}`);
    if (query.updatedAfter !== undefined) where.push(`updated_at > ${next(query.updatedAfter)}`);
    const total = await this.sql.first(
      this.db,
      sqlQuery(`SELECT COUNT(*) AS total FROM escrows WHERE ${where.join(' AND ')}`, column('total', count)),
      params,
    );
    if (query.after) {
      const at = next(query.after.updatedAt);
      where.push(
        `(updated_at < ${at} OR (updated_at = ${next(query.after.updatedAt)} AND escrow_id < ${next(query.after.escrowId)}))`,
      );
    }
    const records = await this.sql.rows(
      this.db,
      sqlQuery(
        `SELECT ${ESCROW_COLUMNS} FROM escrows WHERE ${where.join(' AND ')} ORDER BY updated_at DESC, escrow_id DESC LIMIT ${next(query.limit)}`,
        decodeEscrowRow,
      ),
      params,
    );
    return { records, total: total ?? 0 };
  }

  async due(now: number, limit: number): Promise<string[]> {
    return this.sql.rows(this.db, DUE, [now, limit]);
  }

  async pendingPayouts(limit: number): Promise<Payout[]> {
    return this.sql.rows(this.db, PENDING_PAYOUTS, [limit]);
  }

  async applyPayout(payoutId: string, at: number): Promise<boolean> {
    return this.withTx(async (db) => {
      // Marking paid and crediting commit together; the conditional UPDATE makes the payout happen once.
      const row = await this.sql.first(db, MARK_PAID, [payoutId, at]);
      if (!row) return false;
      await this.creditIn(db, { ...row, source: 'payout' });
      return true;
    });
  }

  async credit(tenant: string, account: string, amount: bigint): Promise<bigint> {
    return this.withTx((db) => this.creditIn(db, { tenant, account, amount, source: 'deposit' }));
  }

  async creditOnce(entry: CreditOnce): Promise<CreditOutcome> {
    return this.withTx(async (db) => {
      // The reference's row decides: a concurrent repeat waits on its key, then finds it (one deposit).
      const inserted = await this.sql.rows(db, INSERT_CREDIT, [
        entry.tenant,
        entry.ref,
        entry.account,
        entry.amount,
        entry.at,
      ]);
      if (inserted.length > 0)
        return { balance: await this.creditIn(db, { ...entry, source: 'deposit' }), replayed: false };
      const row = await this.sql.first(db, CREDIT, [entry.tenant, entry.ref]);
      if (!row)
        throw new LocalError('INVALID_STATE', `deposit reference ${entry.ref} conflicts but cannot be read`);
      checkRepeatedDeposit(entry, row);
      return { balance: await this.balanceIn(db, entry.tenant, entry.account), replayed: true };
    });
  }

  balance(tenant: string, account: string): Promise<bigint> {
    return this.balanceIn(this.db, tenant, account);
  }

  private async balanceIn(db: Db, tenant: string, account: string): Promise<bigint> {
    return (await this.sql.first(db, BALANCE, [tenant, account])) ?? 0n;
  }

  async totals(): Promise<LedgerTotals> {
    const one = async (statement: typeof TOTALS.balances): Promise<bigint> =>
      (await this.sql.first(this.db, statement, [])) ?? 0n;
    return {
      balances: await one(TOTALS.balances),
      credits: await one(TOTALS.credits),
      remaining: await one(TOTALS.remaining),
      pending: await one(TOTALS.pending),
    };
  }

  async held(): Promise<bigint> {
    return (await this.sql.first(this.db, TOTALS.remaining, [])) ?? 0n;
  }

  async events(escrowId: string): Promise<EscrowEvent[]> {
    return this.sql.rows(this.db, EVENTS, [escrowId]);
  }

  watch(escrowId: string, listener: () => void): () => void {
    return this.signals.watch(escrowId, listener);
  }

  /** Adds to an account's balance; a deposit also counts towards what the account was credited in total. */
  private async creditIn(
    db: Db,
    {
      tenant,
      account,
      amount,
      source,
    }: { tenant: string; account: string; amount: bigint; source: 'deposit' | 'payout' },
  ): Promise<bigint> {
    await this.sql.exec(
      db,
      `INSERT INTO escrow_accounts (tenant, account, balance, credited) VALUES ($1, $2, 0, 0) ON CONFLICT (tenant, account) DO NOTHING`,
      [tenant, account],
    );
    const balance = await this.sql.first(db, ADD_BALANCE, [
      tenant,
      account,
      amount,
      source === 'deposit' ? amount : 0n,
    ]);
    return balance ?? 0n;
  }

  private signal(escrowId: string): void {
    this.signals.signal(escrowId);
  }
}
