import type express from 'express';
import type { Clock } from '../shared/clock.js';
import { isMigrated } from '../storage/sql/database-check.js';
import type { Database } from '../storage/sql/database.js';
import type { ListenState } from '../storage/sql/listen-connections.js';
import type { MigrationSet } from '../storage/sql/migrations.js';

/** Where the host answers liveness and readiness probes (docs/operations.md "Health, readiness and shutdown"). */
const HEALTH_PATHS = { live: '/healthz', ready: '/readyz' } as const;

/** The database as the readiness check found it. */
export type DatabaseState = 'ok' | 'unreachable' | 'not_migrated';

/** What `GET /readyz` answers: the verdict and each check by name. Never a cause, URL or stack trace. */
export interface ReadinessReport {
  readonly status: 'ready' | 'not_ready';
  readonly checks: {
    readonly database: DatabaseState;
    readonly listen: ListenState;
    readonly draining: 'yes' | 'no';
  };
}

export interface ReadinessOptions {
  /** The host's database; absent: memory stores, always `ok`. */
  readonly database: Database | undefined;
  /** The migrations this build needs applied (src/server/host-migrations.ts). */
  readonly migrations: readonly MigrationSet[];
  readonly clock: Clock;
  /** A database result is reused this long (default 1000 ms): probes never cost more than one query a second. */
  readonly refreshMs?: number;
  /** A database check that takes longer counts as `unreachable` (default 1000 ms). */
  readonly timeoutMs?: number;
}

const DEFAULT_REFRESH_MS = 1000;
const DEFAULT_TIMEOUT_MS = 1000;

/**
 * The host's readiness: ready when the database answers and has every migration of this build, every
 * PostgreSQL LISTEN connection listens, and the host is not draining. The database is checked with one
 * statement over the migration ledgers (src/storage/sql/database-check.ts `isMigrated`), at most once per
 * `refreshMs` however often probes come, and bounded by `timeoutMs`; LISTEN and draining are read live.
 * HTTP (`/readyz`) and gRPC health (src/a2a/host/grpc-health.ts) read the same object.
 */
export class Readiness {
  private drainingNow = false;
  private database: { state: DatabaseState; at: number } | undefined;
  private refreshing: Promise<DatabaseState> | undefined;
  private readonly followers = new Set<(ready: boolean) => void>();
  private last: boolean;
  private readonly unfollowListens: (() => void) | undefined;

  constructor(private readonly options: ReadinessOptions) {
    this.last = this.verdict().status === 'ready';
    this.unfollowListens = options.database?.listens?.onChange(() => this.changed());
  }

  /** The current report, the database re-checked first when its last result is older than `refreshMs`. */
  async report(): Promise<ReadinessReport> {
    await this.databaseState();
    return this.verdict();
  }

  /** Whether the host is ready now (see {@link report}). */
  async ready(): Promise<boolean> {
    return (await this.report()).status === 'ready';
  }

  /** Whether the host is draining (then it never turns ready again). */
  get draining(): boolean {
    return this.drainingNow;
  }

  /** Turns the host not-ready for good: it is about to stop. */
  startDraining(): void {
    this.drainingNow = true;
    this.changed();
  }

  /** Calls `follower` with the new verdict whenever it changes, until the returned function is called. */
  onChange(follower: (ready: boolean) => void): () => void {
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  /** Stops following the LISTEN connections. */
  close(): void {
    this.unfollowListens?.();
    this.followers.clear();
  }

  private verdict(): ReadinessReport {
    const database = this.database?.state ?? 'ok';
    const listen = this.options.database?.listens?.state() ?? 'none';
    const ready = database === 'ok' && listen !== 'down' && !this.drainingNow;
    return {
      status: ready ? 'ready' : 'not_ready',
      checks: { database, listen, draining: this.drainingNow ? 'yes' : 'no' },
    };
  }

  private changed(): void {
    const ready = this.verdict().status === 'ready';
    if (ready === this.last) return;
    this.last = ready;
    for (const follower of this.followers) follower(ready);
  }

  /** The database's state, re-checked when stale; one check at a time, answered within `timeoutMs`. */
  private async databaseState(): Promise<DatabaseState> {
    const { database, clock } = this.options;
    if (!database) return 'ok';
    const refreshMs = this.options.refreshMs ?? DEFAULT_REFRESH_MS;
    if (this.database && clock.now() - this.database.at < refreshMs) return this.database.state;
    this.refreshing ??= this.check(database).then((state) => {
      this.refreshing = undefined;
      this.record(state);
      return state;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    });
    const state = await Promise.race([this.refreshing, late]);
    clearTimeout(timer);
    if (state !== 'late') return state;
    // Probes meanwhile answer at once from this result; the slow check still records its own when done.
    this.record('unreachable');
    return 'unreachable';
  }

  private async check(database: Database): Promise<DatabaseState> {
    try {
      return (await isMigrated(database, this.options.migrations)) ? 'ok' : 'not_migrated';
    } catch {
      return 'unreachable';
    }
  }

  private record(state: DatabaseState): void {
    this.database = { state, at: this.options.clock.now() };
    this.changed();
  }
}

/**
 * Serves `GET /healthz` (200 while the process serves) and `GET /readyz` (200 ready, else 503), both
 * without authentication and with a JSON body naming each check; and, while the host drains, closes
 * every HTTP/1.1 connection after its response (`Connection: close`) so clients reconnect through the
 * balancer to another host. Mounted after the Host/Origin check and before the request rate, like
 * `/metrics`, so a probe is never rate-limited or asked for a token.
 */
export function mountHealth(app: express.Express, readiness: Readiness): void {
  app.use((_req, res, next) => {
    if (readiness.draining) res.set('connection', 'close');
    next();
  });
  app.get(HEALTH_PATHS.live, (_req, res) => {
    res.set('cache-control', 'no-store');
    res.json({ status: 'serving' });
  });
  app.get(HEALTH_PATHS.ready, (_req, res, next) => {
    readiness.report().then((report) => {
      res.set('cache-control', 'no-store');
      res.status(report.status === 'ready' ? 200 : 503).json(report);
    }, next);
  });
}
