import pg from 'pg';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import type { ListenConnections, ListenTracker } from './listen-connections.js';

/** Options of {@link PgListener}. */
export interface PgListenerOptions {
  readonly url: string;
  readonly channel: string;
  readonly onPayload: (payload: string) => void;
  /** Called after a lost connection was re-established: notifications may have been missed meanwhile. */
  readonly onResync: () => void;
  readonly logger?: Logger;
  /** Where the connection reports whether it listens (the host's readiness); absent: nobody asks. */
  readonly connections?: ListenConnections | undefined;
}

/** The `application_name` of listen connections, so operators find them in `pg_stat_activity`. */
export const LISTEN_APPLICATION_NAME = 'a2a-commerce listen';

const RETRY_MS = [100, 500, 1_000, 2_000];
/** The wait between attempts once the ones above are used up. */
const LAST_RETRY_MS = 5_000;

/**
 * One dedicated PostgreSQL connection that LISTENs on a channel (PostgreSQL's own LISTEN/NOTIFY, no broker)
 * and hands each notification's payload on. A dropped connection is re-opened with back-off; the owner is
 * then told to re-read what it follows, since NOTIFY does not queue for absent listeners.
 */
export class PgListener {
  private client: pg.Client | undefined;
  private closed = false;
  private attempt = 0;
  private retry: NodeJS.Timeout | undefined;
  private readonly logger: Logger;
  private tracker: ListenTracker | undefined;

  constructor(private readonly options: PgListenerOptions) {
    this.logger = options.logger ?? silentLogger;
  }

  /** Connects and listens; resolves once notifications flow (or the first attempt failed and retries). */
  async start(): Promise<void> {
    this.tracker ??= this.options.connections?.track();
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.tracker?.closed();
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: LISTEN_APPLICATION_NAME,
    });
    client.on('notification', (message) => {
      if (message.channel === this.options.channel && message.payload !== undefined)
        this.options.onPayload(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(this.options.channel)}`);
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.tracker?.up();
      if (this.attempt > 0) this.options.onResync();
      this.attempt = 0;
    } catch (error) {
      await client.end().catch(() => undefined);
      this.lost(client, error);
    }
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.closed || (this.client !== undefined && this.client !== client)) return;
    if (this.client === client) this.client = undefined;
    this.tracker?.down();
    if (this.retry) return;
    if (error !== undefined) this.logger.warn('db.listen_connection_lost', errorFields(error));
    const wait = RETRY_MS[this.attempt] ?? LAST_RETRY_MS;
    this.attempt += 1;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, wait);
    this.retry.unref();
  }
}
