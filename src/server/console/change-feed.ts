import type { Database } from '../../storage/sql/database.js';
import type { Logger } from '../../shared/logger.js';
import { errorFields } from '../../shared/logger.js';
import type { ConsoleTables } from './tables.js';

/** The areas a change event names, each with the table and the cheap fingerprint it is read by. */
const WATCHED: readonly { area: string; table: string; column: string }[] = [
  { area: 'tasks', table: 'acmp_tasks', column: 'updated_at' },
  { area: 'escrow', table: 'escrows', column: 'updated_at' },
  { area: 'escrow', table: 'escrow_accounts', column: 'balance' },
  { area: 'negotiation', table: 'acmp_sessions', column: 'updated_at' },
  { area: 'negotiation', table: 'acmp_agreements', column: 'accepted_at' },
  { area: 'acp', table: 'acp_transactions', column: 'version' },
];

/** A change the feed saw: the areas whose tables changed since the previous read. */
export interface ConsoleChange {
  readonly at: number;
  readonly areas: string[];
}

/**
 * Live updates of the console (SSE `/console/api/events`), from the database: every `everyMs` one reader
 * reads a fingerprint (row count and the sum of one column) per watched table, and tells every subscriber
 * the areas that changed. Reading the database, not this process, shows what every host of the cluster
 * did. The reader runs only while someone subscribes.
 */
export class ChangeFeed {
  private readonly listeners = new Set<(change: ConsoleChange) => void>();
  private timer: NodeJS.Timeout | undefined;
  private last = new Map<string, string>();
  private reading = false;

  constructor(
    private readonly deps: { database: Database; tables: ConsoleTables; logger: Logger; now: () => number },
    private readonly everyMs: number,
  ) {}

  /** Calls `listener` on every change until the returned function is called. */
  subscribe(listener: (change: ConsoleChange) => void): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => void this.read(), this.everyMs);
      this.timer.unref();
      void this.read();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.last = new Map();
  }

  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const now = this.deps.now();
      const areas = new Set<string>();
      const first = this.last.size === 0;
      for (const { area, table, column } of WATCHED) {
        if (!(await this.deps.tables.has(table, now))) continue;
        const row = (await this.deps.database.db
          .selectFrom(table)
          .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum(column).as('s')])
          .executeTakeFirst()) as { n: unknown; s: unknown } | undefined;
        const print = `${String(row?.n)}:${String(row?.s)}`;
        if (this.last.get(table) !== print) areas.add(area);
        this.last.set(table, print);
      }
      if (!first && areas.size > 0) for (const l of this.listeners) l({ at: now, areas: [...areas] });
    } catch (error) {
      this.deps.logger.warn('console.feed_read_failed', errorFields(error));
    } finally {
      this.reading = false;
    }
  }
}
