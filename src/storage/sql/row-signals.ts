import { KeyedWatchers } from '../../shared/keyed-watchers.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { Database } from './database.js';
import type { Metrics } from '../../shared/metrics.js';
import { lagProbe, PgListener } from './pg-listener.js';

/**
 * Change signals of one store's rows, by key: in process on every dialect, and across hosts on
 * PostgreSQL over one LISTEN channel (the writer NOTIFYs in the statement that changes the row). After a
 * reconnect every watched key is signalled, since a notification may have been missed meanwhile.
 */
export class RowSignals {
  private readonly watchers = new KeyedWatchers();
  private readonly listener: PgListener | undefined;

  constructor(
    database: Pick<Database, 'db' | 'dialect' | 'url' | 'listens'>,
    options: { channel: string; logger?: Logger | undefined; metrics?: Metrics | undefined },
  ) {
    if (database.dialect === 'postgres') {
      this.listener = new PgListener({
        url: database.url,
        channel: options.channel,
        logger: options.logger ?? silentLogger,
        connections: database.listens,
        onPayload: (key) => this.signal(key),
        onResync: () => this.watchers.keys().forEach((key) => this.signal(key)),
        ...lagProbe(database.db, options.channel, options.metrics),
      });
    }
  }

  /** Opens the notification connection (PostgreSQL); call before serving. */
  async open(): Promise<void> {
    await this.listener?.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  /** Calls `listener` on each signal of `key` until the returned function is called. */
  watch(key: string, listener: () => void): () => void {
    return this.watchers.watch(key, listener);
  }

  /** Tells this process's watchers of `key` (other hosts hear the writer's NOTIFY). */
  signal(key: string): void {
    this.watchers.emit(key, undefined);
  }
}
