import { sql } from 'kysely';
import type { Database } from '../../storage/sql/database.js';

/** How long the list of tables is kept: modules (and so tables) change only when a host restarts. */
const TABLES_TTL_MS = 10_000;

/**
 * The tables that exist in the host's database, so a console read of a module this cluster does not run
 * (no escrow agent, no session mode) answers empty instead of failing. Cached for a few seconds.
 */
export class ConsoleTables {
  private cached: { at: number; names: Set<string> } | undefined;

  constructor(private readonly database: Database) {}

  async has(name: string, now: number): Promise<boolean> {
    if (!this.cached || now - this.cached.at > TABLES_TTL_MS)
      this.cached = { at: now, names: await this.read() };
    return this.cached.names.has(name);
  }

  private async read(): Promise<Set<string>> {
    const query =
      this.database.dialect === 'sqlite'
        ? sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`
        : sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables
            WHERE table_schema = current_schema()`;
    const { rows } = await query.execute(this.database.db);
    return new Set(rows.map((r) => r.name));
  }
}

/** A stored integer as a number: SQLite answers numbers, PostgreSQL's bigint answers text. */
export function num(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** A stored integer that may be absent. */
export function optNum(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : Number(value);
}

/** Parses stored JSON text; `undefined` for anything that is not JSON (a row is shown, never crashes a page). */
export function parseStored(text: unknown): unknown {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A stored text column as a string ('' when absent). */
export function str(value: unknown): string {
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'bigint' ? value.toString() : '';
}

/** A stored text column that may be null. */
export function optStr(value: unknown): string | null {
  return value === null || value === undefined ? null : str(value);
}
