import { SDK_STORE_TABLES } from '../a2a/host/sdk-stores.js';
import { timerClockOf, type Clock, type TimerClock, type TimerHandle } from '../shared/clock.js';
import { errorFields, type Logger } from '../shared/logger.js';
import type { Database } from '../storage/sql/database.js';
import type { PruneCount } from '../storage/retention/policy.js';
import { Pruner } from '../storage/retention/pruner.js';
import type { RetentionConfig } from './retention-config.js';

/** The first pass comes this long after start at most (sooner with a shorter interval). */
const FIRST_PASS_MS = 60_000;

/** The host's pruner over its database (the SDK's task tables included). */
export function hostPruner(
  database: Pick<Database, 'db' | 'dialect' | 'url'>,
  retention: RetentionConfig,
  clock: Clock,
): Pruner {
  return new Pruner(database, {
    ages: retention.ages,
    batching: retention.batching,
    sdkTables: SDK_STORE_TABLES,
    clock,
  });
}

/** Starts pruning ended work in the background, when the host has a database and an interval. */
export function startBackgroundPruner(
  database: Pick<Database, 'db' | 'dialect' | 'url'> | undefined,
  retention: RetentionConfig,
  host: { readonly logger: Logger; readonly clock: Clock },
): BackgroundPruner | undefined {
  if (!database || retention.intervalMs === null) return undefined;
  const pruner = new BackgroundPruner(hostPruner(database, retention, host.clock), {
    intervalMs: retention.intervalMs,
    logger: host.logger,
    clock: host.clock,
  });
  pruner.start();
  return pruner;
}

/**
 * Runs a retention pass every `intervalMs` in the background of a host (docs/operations.md "Retention"):
 * one pass at a time, timers that do not keep the process alive, a failed pass logged and retried at the
 * next interval. Stopping aborts the pass between two statements and waits for it.
 */
export class BackgroundPruner {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  private readonly clock: TimerClock;

  constructor(
    private readonly pruner: Pruner,
    private readonly options: {
      readonly intervalMs: number;
      readonly logger: Logger;
      readonly clock: Clock | TimerClock;
    },
  ) {
    this.clock = timerClockOf(options.clock);
  }

  start(): void {
    this.schedule(Math.min(this.options.intervalMs, FIRST_PASS_MS));
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.timer?.cancel();
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopping.signal.aborted) return;
    this.timer = this.clock
      .setTimeout(() => {
        this.running = this.pass().finally(() => {
          this.running = undefined;
          this.schedule(this.options.intervalMs);
        });
      }, ms)
      .background();
  }

  private async pass(): Promise<void> {
    const { logger } = this.options;
    const clock = this.clock;
    const started = clock.now();
    try {
      const run = await this.pruner.prune({ signal: this.stopping.signal });
      if (!run.ran) {
        logger.debug('retention.skipped', { reason: 'another pruner holds the lock' });
        return;
      }
      const removed = run.counts.filter((c) => c.rows > 0);
      if (removed.length > 0)
        logger.info('retention.pruned', { ...countFields(removed), duration_ms: clock.now() - started });
    } catch (error) {
      logger.warn('retention.prune_failed', errorFields(error));
    }
  }
}

/** The counts of a pass as log fields, one per kind (`task_results: 1200`, …). */
function countFields(counts: readonly PruneCount[]): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const c of counts) fields[c.kind] = (fields[c.kind] ?? 0) + c.rows;
  return fields;
}
