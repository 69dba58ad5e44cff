import { timedCommit, type Metrics, type StoreOperation } from '../../shared/metrics.js';
import { traceCommit } from '../../shared/tracing.js';
import { dbSystemOf, type SqlDialect } from './database.js';

/**
 * One store commit, observed once for both signals (docs/operations.md "Metrics" and "Tracing"): a
 * `store.commit <operation>` child span and one `a2a_commerce_store_commit_duration_seconds`
 * observation, under the same operation name — one observation per transaction or group-commit batch.
 */
export function observedCommit<T>(
  metrics: Metrics,
  commit: { operation: StoreOperation; dialect: SqlDialect; batchSize?: number },
  run: () => Promise<T>,
): Promise<T> {
  const { operation, dialect, batchSize } = commit;
  const span = { operation, system: dbSystemOf(dialect), ...(batchSize === undefined ? {} : { batchSize }) };
  return traceCommit(span, () => timedCommit(metrics, operation, run));
}
