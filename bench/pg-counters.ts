import pg from 'pg';
import { pgBackendCpuUs } from './pg-procs.js';

/**
 * Counters of one PostgreSQL database around a measured phase: commits and row operations
 * (pg_stat_database, pg_stat_user_tables), WAL bytes (pg_current_wal_lsn, cluster-wide; or per database
 * from pg_stat_statements), statements (pg_stat_statements, when the server preloads it) and the CPU of
 * the backends serving the database (/proc). Read over a connection to another database, so the readings
 * do not count themselves.
 */

/** One reading. */
export interface PgReading {
  lsn: string;
  commits: number;
  rollbacks: number;
  /** Per table: rows inserted, updated, deleted, and index + sequential scans. */
  tables: Record<string, { ins: number; upd: number; del: number; scans: number }>;
  /** Statements, their rows and WAL bytes in this database (undefined without pg_stat_statements). */
  statements?: { calls: number; rows: number; walBytes: number };
  backendCpuUs: number;
}

/** Per operation, between two readings. */
export interface PgPerOp {
  walBytes: number;
  /** `cluster` when the WAL figure counts every database (no pg_stat_statements). */
  walScope: 'database' | 'cluster';
  commits: number;
  statements: number | undefined;
  backendCpuUs: number;
  tables: Record<string, { ins: number; upd: number; del: number; scans: number }>;
}

/**
 * Cumulative statistics reach pg_stat_database and pg_stat_user_tables when a backend flushes them (at
 * most once a second while busy, PostgreSQL 15+): readings are taken this long after the load stops.
 */
export const STATS_SETTLE_MS = 1500;

export class PgCounters {
  private statementsAvailable = false;

  private constructor(
    private readonly client: pg.Client,
    /** In the measured database: pg_stat_user_tables shows the current database only. */
    private readonly local: pg.Client,
    private readonly database: string,
  ) {}

  /**
   * Connects to `adminUrl` (another database, so database-wide readings do not count themselves) and to
   * the measured database, and checks whether pg_stat_statements can be read.
   */
  static async open(adminUrl: string, db: { name: string; url: string }): Promise<PgCounters> {
    const client = new pg.Client({ connectionString: adminUrl });
    const local = new pg.Client({ connectionString: db.url });
    await client.connect();
    await local.connect();
    const counters = new PgCounters(client, local, db.name);
    counters.statementsAvailable = await canReadStatements(local);
    return counters;
  }

  get hasStatements(): boolean {
    return this.statementsAvailable;
  }

  async read(): Promise<PgReading> {
    const db = await this.client.query<{ lsn: string; commits: string; rollbacks: string }>(
      `SELECT pg_current_wal_lsn()::text AS lsn, xact_commit::text AS commits, xact_rollback::text AS rollbacks
         FROM pg_stat_database WHERE datname = $1`,
      [this.database],
    );
    const reading: PgReading = {
      lsn: db.rows[0]?.lsn ?? '0/0',
      commits: Number(db.rows[0]?.commits ?? 0),
      rollbacks: Number(db.rows[0]?.rollbacks ?? 0),
      tables: await this.tables(),
      backendCpuUs: pgBackendCpuUs(this.database),
    };
    if (this.statementsAvailable) {
      const s = await this.client.query<{ calls: string; rows: string; wal: string }>(
        `SELECT coalesce(sum(calls), 0)::text AS calls, coalesce(sum(rows), 0)::text AS rows,
                coalesce(sum(wal_bytes), 0)::text AS wal
           FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1)`,
        [this.database],
      );
      const row = s.rows[0];
      reading.statements = { calls: Number(row?.calls), rows: Number(row?.rows), walBytes: Number(row?.wal) };
    }
    return reading;
  }

  /** Per operation between two readings. */
  async perOp(before: PgReading, after: PgReading, ops: number): Promise<PgPerOp> {
    const wal = await this.client.query<{ bytes: string }>(
      'SELECT pg_wal_lsn_diff($1::pg_lsn, $2::pg_lsn)::text AS bytes',
      [after.lsn, before.lsn],
    );
    const tables: PgPerOp['tables'] = {};
    for (const [name, a] of Object.entries(after.tables)) {
      const b = before.tables[name] ?? { ins: 0, upd: 0, del: 0, scans: 0 };
      const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, del: a.del - b.del, scans: a.scans - b.scans };
      if (d.ins + d.upd + d.del + d.scans > 0)
        tables[name] = { ins: d.ins / ops, upd: d.upd / ops, del: d.del / ops, scans: d.scans / ops };
    }
    const statements =
      after.statements && before.statements ? after.statements.calls - before.statements.calls : undefined;
    const dbWal =
      after.statements && before.statements
        ? after.statements.walBytes - before.statements.walBytes
        : undefined;
    return {
      walBytes: (dbWal ?? Number(wal.rows[0]?.bytes ?? NaN)) / ops,
      walScope: dbWal === undefined ? 'cluster' : 'database',
      commits: (after.commits - before.commits) / ops,
      statements: statements === undefined ? undefined : statements / ops,
      backendCpuUs: (after.backendCpuUs - before.backendCpuUs) / ops,
      tables,
    };
  }

  async close(): Promise<void> {
    await this.client.end();
    await this.local.end();
  }

  private async tables(): Promise<PgReading['tables']> {
    const r = await this.local.query<{
      relname: string;
      ins: string;
      upd: string;
      del: string;
      scans: string;
    }>(
      `SELECT relname, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del,
              (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS scans
         FROM pg_stat_user_tables`,
    );
    return Object.fromEntries(
      r.rows.map((t) => [
        t.relname,
        { ins: Number(t.ins), upd: Number(t.upd), del: Number(t.del), scans: Number(t.scans) },
      ]),
    );
  }
}

/** Whether pg_stat_statements is installed (created here if possible) and readable. */
async function canReadStatements(client: pg.Client): Promise<boolean> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT 1 FROM pg_stat_statements LIMIT 1');
    return true;
  } catch {
    // Without shared_preload_libraries = 'pg_stat_statements' the view refuses to answer.
    return false;
  }
}
