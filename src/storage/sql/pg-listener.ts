import { randomUUID } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import type { ListenConnections, ListenTracker } from './listen-connections.js';
import type { Metrics } from '../../shared/metrics.js';
import type { SqlKysely } from './query.js';

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
  /**
   * Measures the notification lag (docs/operations.md "Metrics"): a probe NOTIFY on the channel is sent
   * through `send` (a pool connection, as real signals are) right after each LISTEN and then every
   * {@link PROBE_MS}; `onLag` hears how long it took to arrive here.
   */
  readonly probe?: { send(payload: string): Promise<void>; onLag(seconds: number): void };
}

/** The `application_name` of listen connections, so operators find them in `pg_stat_activity`. */
export const LISTEN_APPLICATION_NAME = 'a2a-commerce listen';

/** How often a listener probes its channel's lag. */
const PROBE_MS = 10_000;
/**
 * Probe payloads start with this: never a valid signal of any channel (task signals are JSON, row
 * signals are ids), so listeners that do not know probes ignore them too.
 */
const PROBE_PREFIX = '~lag-probe:';
/** Probes awaited at most at once (older ones are given up as lost). */
const MAX_PROBES_WAITING = 8;

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
  private prober: NodeJS.Timeout | undefined;
  /** Probes sent and not yet received: payload → `performance.now()` when sent. */
  private readonly probes = new Map<string, number>();
  private readonly probeId = randomUUID();
  private probeSeq = 0;

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
    clearInterval(this.prober);
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
      if (message.channel !== this.options.channel || message.payload === undefined) return;
      if (message.payload.startsWith(PROBE_PREFIX)) this.probed(message.payload);
      else this.options.onPayload(message.payload);
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
      this.startProbing();
    } catch (error) {
      await client.end().catch(() => undefined);
      this.lost(client, error);
    }
  }

  /** Probes now and every {@link PROBE_MS} while connected. */
  private startProbing(): void {
    if (!this.options.probe) return;
    clearInterval(this.prober);
    this.prober = setInterval(() => this.sendProbe(), PROBE_MS);
    this.prober.unref();
    this.sendProbe();
  }

  private sendProbe(): void {
    const probe = this.options.probe;
    if (!probe || this.client === undefined) return;
    const payload = `${PROBE_PREFIX}${this.probeId}:${++this.probeSeq}`;
    for (const key of [...this.probes.keys()].slice(
      0,
      Math.max(0, this.probes.size - MAX_PROBES_WAITING + 1),
    ))
      this.probes.delete(key);
    this.probes.set(payload, performance.now());
    probe.send(payload).catch((error: unknown) => {
      this.probes.delete(payload);
      this.logger.warn('db.lag_probe_failed', errorFields(error));
    });
  }

  /** A probe arrived: this listener's own is timed, another host's is ignored. */
  private probed(payload: string): void {
    const sent = this.probes.get(payload);
    if (sent === undefined) return;
    this.probes.delete(payload);
    this.options.probe?.onLag((performance.now() - sent) / 1000);
  }

  private lost(client: pg.Client, error: unknown): void {
    clearInterval(this.prober);
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

/**
 * The lag probe of a listener on `channel` (absent without metrics): sent through `db`'s pool, timed into
 * `a2a_commerce_pg_notification_lag_seconds`.
 */
export function lagProbe(
  db: SqlKysely,
  channel: string,
  metrics: Metrics | undefined,
): Pick<PgListenerOptions, 'probe'> {
  if (!metrics) return {};
  return {
    probe: {
      send: async (payload) =>
        void (await db.executeQuery(CompiledQuery.raw('SELECT pg_notify($1, $2)', [channel, payload]))),
      onLag: (seconds) => metrics.pgNotificationLag(channel, seconds),
    },
  };
}
