import { RETENTION_ENV as E } from '../server/retention-config.js';

/** `serve`'s retention options (docs/operations.md "Retention"). */
export const SERVE_RETENTION_OPTIONS = {
  'retain-tasks': { type: 'string' },
  'retain-task-ids': { type: 'string' },
  'retain-sessions': { type: 'string' },
  'prune-interval': { type: 'string' },
  'prune-batch': { type: 'string' },
  'prune-pause': { type: 'string' },
} as const;

/** The usage lines of {@link SERVE_RETENTION_OPTIONS}. */
export const SERVE_RETENTION_USAGE = `  --retain-tasks <age>   finished ACMP tasks keep their result and chunks, ended A2A tasks their row, this
                         long (${E.retainTasks}, default 7d; off = forever; at least 1h)
  --retain-task-ids <age>  a pruned ACMP task id is refused (-32602 task_pruned), not run again, for
                         this long after its result was pruned (${E.retainTaskIds}, default 30d; off = forever)
  --retain-sessions <age>  ended negotiation sessions (${E.retainSessions}, default 7d; off = forever)
  --prune-interval <d>   prune in the background this often (${E.pruneInterval}, default 10m; off = only
                         'a2a-commerce prune'); one pass at a time over every host on PostgreSQL
  --prune-batch <n>      rows per pruning statement (${E.pruneBatch}, default 500)
  --prune-pause <d>      pause between pruning statements (${E.prunePause}, default 100ms)`;
