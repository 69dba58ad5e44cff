import { z } from 'zod';
import type {
  Reservation,
  ReservationRequest,
  ReservationState,
  ReservationStore,
} from '../../acmp/escrow/reservations.js';
import { LocalError } from '../../shared/errors.js';
import type { Database } from '../sql/database.js';
import { encodeJson } from './escrow-rows.js';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import { sqlQuery, SqlRunner, type SqlKysely } from '../sql/query.js';

const createReservations: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acmp_escrow_reservations')
      .addColumn('escrow_id', 'text', (c) => c.primaryKey())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('proof', 'text')
      .addColumn('claim_after', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('acmp_escrow_reservations_state')
      .on('acmp_escrow_reservations')
      .columns(['state', 'created_at'])
      .execute();
  },
};

/** The provider-side escrow tables (reservations), applied with the ACMP module when it checks escrows. */
export const acmpEscrowMigrations: MigrationSet = {
  id: 'acmp_escrow',
  migrations: { '0001_reservations': createReservations },
};

const Big = z.union([z.number().int(), z.string().regex(/^-?\d+$/)]).transform((v) => BigInt(v));
const RowSchema = z.object({
  escrow_id: z.string(),
  task_id: z.string(),
  state: z.enum(['reserved', 'delivered', 'claimed', 'settled', 'void']),
  amount: Big,
  proof: z.string().nullable(),
  claim_after: Big.transform(Number).nullable(),
  created_at: Big.transform(Number),
});

function decode(row: unknown): Reservation {
  const parsed = RowSchema.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'acmp_escrow_reservations row is malformed');
  const r = parsed.data;
  return {
    escrowId: r.escrow_id,
    taskId: r.task_id,
    state: r.state,
    amount: r.amount,
    proof: r.proof === null ? null : z.json().parse(JSON.parse(r.proof)),
    claimAfter: r.claim_after,
    createdAt: r.created_at,
  };
}

const IN_STATE = sqlQuery(
  `SELECT * FROM acmp_escrow_reservations WHERE state = $1 ORDER BY created_at LIMIT $2`,
  decode,
);
const GET = sqlQuery(`SELECT * FROM acmp_escrow_reservations WHERE escrow_id = $1`, decode);

/**
 * {@link ReservationStore} on SQLite or PostgreSQL: the reservation is one `INSERT … ON CONFLICT`, which
 * takes over only a `void` reservation (a task that failed or never ran frees its escrow).
 */
export class KyselyReservationStore implements ReservationStore {
  private readonly db: SqlKysely;
  private readonly sql: SqlRunner;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.db = database.db;
    this.sql = new SqlRunner(database.dialect);
  }

  async reserve({ escrowId, taskId, amount, at }: ReservationRequest): Promise<Reservation> {
    await this.sql.exec(
      this.db,
      `INSERT INTO acmp_escrow_reservations (escrow_id, task_id, state, amount, created_at) VALUES ($1, $2, 'reserved', $3, $4)
       ON CONFLICT (escrow_id) DO UPDATE SET task_id = excluded.task_id, state = 'reserved', amount = excluded.amount, proof = NULL, claim_after = NULL, created_at = excluded.created_at
       WHERE acmp_escrow_reservations.state = 'void'`,
      [escrowId, taskId, amount, at],
    );
    const held = await this.get(escrowId);
    if (!held) throw new LocalError('INVALID_STATE', 'reservation row vanished');
    return held;
  }

  async inState(state: ReservationState, limit: number): Promise<Reservation[]> {
    return this.sql.rows(this.db, IN_STATE, [state, limit]);
  }

  async update(
    escrowId: string,
    from: ReservationState,
    to: Parameters<ReservationStore['update']>[2],
  ): Promise<boolean> {
    const params: unknown[] = [escrowId, from, to.state];
    const sets = ['state = $3'];
    if (to.amount !== undefined) sets.push(`amount = $${params.push(to.amount)}`);
    if (to.proof !== undefined)
      sets.push(`proof = $${params.push(to.proof === null ? null : encodeJson(to.proof))}`);
    if (to.claimAfter !== undefined) sets.push(`claim_after = $${params.push(to.claimAfter)}`);
    const changed = await this.sql.exec(
      this.db,
      `UPDATE acmp_escrow_reservations SET ${sets.join(', ')} WHERE escrow_id = $1 AND state = $2`,
      params,
    );
    return changed === 1;
  }

  async get(escrowId: string): Promise<Reservation | undefined> {
    return this.sql.first(this.db, GET, [escrowId]);
  }
}
