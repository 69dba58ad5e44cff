import { z } from 'zod';
import type {
  DagRunStore,
  NodeOutcome,
  NodeState,
  RunState,
  StoredNode,
  StoredRun,
} from '../../acmp/dag/dag-ports.js';
import { InvokeParamsSchema, PayloadSchema, type InvokeParams } from '../../acmp/wire/task-messages.js';
import type { Clock } from '../../shared/clock.js';
import { systemClock } from '../../shared/clock.js';
import { LocalError } from '../../shared/errors.js';
import type { MigrationSet, SqlMigration } from '../sql/migrations.js';
import type { Database } from '../sql/database.js';
import { IntColumn as Int, sqlQuery, SqlRunner, type SqlKysely } from '../sql/query.js';

/** A run and its nodes (docs/acmp-dag.md "Durability"): one row per node, its params before its send. */
const createRuns: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('dag_runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('dag_id', 'text', (c) => c.notNull())
      .addColumn('dag', 'text', (c) => c.notNull())
      .addColumn('terms', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('finished_at', 'bigint')
      .execute();
    await db.schema
      .createTable('dag_nodes')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('task_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('params', 'text')
      .addColumn('outcome', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('dag_nodes_pk', ['run_id', 'node_id'])
      .execute();
  },
};

/** The `acmp_dag` migration set (SQLite and PostgreSQL): the buyer's DAG runs (docs/acmp-dag.md). */
export const dagMigrations: MigrationSet = { id: 'acmp_dag', migrations: { '0001_runs': createRuns } };

const NodeErrorSchema = z.object({
  code: z.union([z.number(), z.string()]),
  message: z.string(),
  data: z.json().optional(),
});
const NodeOutcomeSchema = z.discriminatedUnion('state', [
  z.object({
    state: z.literal('completed'),
    output: PayloadSchema,
    costCu: z.number(),
    proof: z.json().optional(),
  }),
  z.object({ state: z.literal('failed'), error: NodeErrorSchema, costCu: z.number().optional() }),
  z.object({ state: z.literal('cancelled'), reason: z.string() }),
]);
const NODE_STATES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
const RunRow = z.object({
  run_id: z.string(),
  dag_id: z.string(),
  dag: z.string(),
  terms: z.string(),
  state: z.enum(['running', 'completed', 'failed', 'cancelled']),
});
const NodeRow = z.object({
  node_id: z.string(),
  position: Int,
  task_id: z.string(),
  state: z.enum(NODE_STATES),
  params: z.string().nullable(),
  outcome: z.string().nullable(),
});

const LOAD_RUN = sqlQuery(
  `SELECT run_id, dag_id, dag, terms, state FROM dag_runs WHERE run_id = $1`,
  decodeRun,
);
const LOAD_NODES = sqlQuery(
  `SELECT node_id, position, task_id, state, params, outcome FROM dag_nodes WHERE run_id = $1 ORDER BY position`,
  decodeNode,
);

/**
 * {@link DagRunStore} on SQLite or PostgreSQL. A node moves forward only: `startNode` applies to a
 * pending node, `finishNode` to a pending or running one (one conditional UPDATE each), so a stale
 * runner cannot overwrite an outcome.
 */
export class KyselyDagRunStore implements DagRunStore {
  private readonly db: SqlKysely;
  private readonly sql: SqlRunner;

  constructor(
    database: Pick<Database, 'db' | 'dialect'>,
    private readonly clock: Clock = systemClock,
  ) {
    this.db = database.db;
    this.sql = new SqlRunner(database.dialect);
  }

  async createRun(run: Omit<StoredRun, 'state'>): Promise<'created' | 'exists'> {
    const now = this.clock.now();
    return this.db.transaction().execute(async (trx) => {
      const inserted = await this.sql.exec(
        trx,
        `INSERT INTO dag_runs (run_id, dag_id, dag, terms, state, created_at) VALUES ($1, $2, $3, $4, 'running', $5) ON CONFLICT DO NOTHING`,
        [run.runId, run.dagId, run.dag, run.terms, now],
      );
      if (inserted !== 1) return 'exists';
      for (const [position, node] of run.nodes.entries())
        await this.sql.exec(
          trx,
          `INSERT INTO dag_nodes (run_id, node_id, position, task_id, state, updated_at) VALUES ($1, $2, $3, $4, 'pending', $5)`,
          [run.runId, node.nodeId, position, node.taskId, now],
        );
      return 'created';
    });
  }

  async loadRun(runId: string): Promise<StoredRun | undefined> {
    const run = await this.sql.first(this.db, LOAD_RUN, [runId]);
    if (run === undefined) return undefined;
    return { ...run, nodes: await this.sql.rows(this.db, LOAD_NODES, [runId]) };
  }

  async startNode(runId: string, node: { nodeId: string; params: InvokeParams }): Promise<void> {
    await this.sql.exec(
      this.db,
      `UPDATE dag_nodes SET state = 'running', params = $1, updated_at = $2 WHERE run_id = $3 AND node_id = $4 AND state = 'pending'`,
      [JSON.stringify(node.params), this.clock.now(), runId, node.nodeId],
    );
  }

  async finishNode(runId: string, node: { nodeId: string; outcome: NodeOutcome }): Promise<void> {
    await this.sql.exec(
      this.db,
      `UPDATE dag_nodes SET state = $1, outcome = $2, updated_at = $3 WHERE run_id = $4 AND node_id = $5 AND state IN ('pending', 'running')`,
      [node.outcome.state, JSON.stringify(node.outcome), this.clock.now(), runId, node.nodeId],
    );
  }

  async finishRun(runId: string, state: Exclude<RunState, 'running'>): Promise<void> {
    await this.sql.exec(
      this.db,
      `UPDATE dag_runs SET state = $1, finished_at = $2 WHERE run_id = $3 AND state = 'running'`,
      [state, this.clock.now(), runId],
    );
  }
}

/** A run row without its nodes, decoded at the edge. */
function decodeRun(row: unknown): Omit<StoredRun, 'nodes'> {
  const parsed = RunRow.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'dag_runs row is malformed');
  const r = parsed.data;
  return { runId: r.run_id, dagId: r.dag_id, dag: r.dag, terms: r.terms, state: r.state };
}

/** A node row, decoded at the edge: its params and outcome are parsed, never cast. */
function decodeNode(row: unknown): StoredNode {
  const parsed = NodeRow.safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'dag_nodes row is malformed');
  const r = parsed.data;
  const params = r.params === null ? undefined : InvokeParamsSchema.safeParse(parseJson(r.params));
  const outcome = r.outcome === null ? undefined : NodeOutcomeSchema.safeParse(parseJson(r.outcome));
  if (params?.success === false || outcome?.success === false)
    throw new LocalError('INVALID_STATE', 'dag_nodes row is malformed');
  const state: NodeState = r.state;
  return {
    nodeId: r.node_id,
    state,
    taskId: r.task_id,
    ...(params ? { params: params.data } : {}),
    ...(outcome ? { outcome: outcome.data } : {}),
  };
}
/** JSON text from a row; text that is not JSON reads as `undefined`, which the schemas refuse. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
