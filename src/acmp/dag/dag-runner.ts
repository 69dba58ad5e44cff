import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { InvokeParams, Payload } from '../wire/task-messages.js';
import { parseDag, type DagPlan } from './dag-check.js';
import type { DagEvent, DagRunResult } from './dag-events.js';
import { DagError } from './dag-errors.js';
import type {
  DagBuyerPort,
  DagProvider,
  DagRunStore,
  NodeOutcome,
  NodeState,
  StoredRun,
} from './dag-ports.js';
import { executeNode, nodeError, nodeParams } from './node-call.js';
import { resolveInput } from './resolve-input.js';
import { checkRunTerms, routeKey, routeOf, type RunTerms } from './run-checks.js';
import { connectProviders, openStoredRun } from './run-setup.js';
import { planStreaming, type StreamPlan } from './stream-plan.js';
import { reportOf } from './run-report.js';

/**
 * Layer 2 §4: fail-fast cancels the entire DAG on the first failure; best-effort keeps independent
 * branches running ("a configuration choice, not specified by the protocol").
 */
export type FailurePolicy = 'fail-fast' | 'best-effort';

/** Options of {@link DagRunner}. */
export interface DagRunOptions {
  /** The run's id: the same id resumes the run (docs/acmp-dag.md "Durability"). */
  readonly runId: string;
  readonly store: DagRunStore;
  readonly port: DagBuyerPort;
  readonly terms: RunTerms;
  /** Nodes in flight at once (default 4). */
  readonly maxParallel?: number;
  /** Default `fail-fast`: a buyer of paid agents stops spending on a plan that can no longer finish. */
  readonly policy?: FailurePolicy;
  /** Cancels the whole DAG when it aborts (Ctrl-C, an API call, a deadline): no new node starts. */
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: DagEvent) => void;
}

/** One node while the run holds it. */
interface LiveNode {
  state: NodeState;
  readonly taskId: string;
  params?: InvokeParams;
  outcome?: NodeOutcome;
  abort?: AbortController;
}

/**
 * Runs a Layer 2 DAG as the buyer's orchestrator (§3: "walks the graph and emits one Layer 1
 * acmp/invoke per task"): each node is started as soon as every upstream node completed, at most
 * `maxParallel` at once; its input resolved from the verified upstream outputs; its state stored before
 * its invoke is sent, so a restarted runner with the same run id re-sends the same task id and never
 * buys a node twice.
 */
export class DagRunner {
  private readonly plan: DagPlan;
  private readonly nodes = new Map<string, LiveNode>();
  private readonly outputs = new Map<string, Payload>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private providers = new Map<string, DagProvider>();
  private streams: StreamPlan = { streamed: new Set(), fallbacks: [] };
  private writes: Promise<void> = Promise.resolve();
  private writeError: Error | undefined;
  private stopping = false;

  /** @throws DagError (every problem) for a DAG or terms that cannot run: nothing is stored or sent. */
  constructor(
    document: unknown,
    private readonly options: DagRunOptions,
  ) {
    this.plan = parseDag(document);
    const problems = checkRunTerms(this.plan, options.terms);
    if (problems.length > 0) throw new DagError(problems);
  }

  /**
   * Runs (or resumes) the DAG to its end.
   * @throws DagError `DAG_RUN_CONFLICT` when the run id belongs to another DAG, `DAG_PROVIDER_UNFIT` when a
   *   provider does not accept `acmp/invoke`; a provider's connection error — all before any node is sent.
   */
  async run(): Promise<DagRunResult> {
    const stored = await this.openRun();
    if (stored.state !== 'running') return this.report(stored.state);
    await this.connect();
    this.streams = planStreaming(
      this.plan,
      (id) => this.providers.get(this.routeKeyOf(id))?.capabilityObject,
    );
    for (const f of this.streams.fallbacks) this.emit({ kind: 'fallback', ...f });
    const stop = (): void => this.cancelAll('cancelled by the buyer');
    if (this.options.signal?.aborted) stop();
    this.options.signal?.addEventListener('abort', stop, { once: true });
    try {
      await this.loop();
    } finally {
      this.options.signal?.removeEventListener('abort', stop);
    }
    await this.writes;
    if (this.writeError) throw this.writeError;
    const result = this.report();
    await this.options.store.finishRun(this.options.runId, result.state);
    return result;
  }

  /**
   * Cancels one node (Layer 2 §4): it and every downstream dependent (BFS over outgoing edges) become
   * `cancelled`; those in flight are aborted, so the buyer sends `acmp/cancel` to their providers;
   * completed upstream nodes keep their results.
   */
  cancelNode(nodeId: string, reason = 'cancelled by the buyer'): void {
    for (const id of this.downstreamOf(nodeId, { including: true })) this.cancelOne(id, reason);
  }

  /** Opens the stored run and takes its nodes as they were stored (a resumed run keeps its outcomes). */
  private async openRun(): Promise<StoredRun> {
    const stored = await openStoredRun(this.plan, this.options);
    for (const node of stored.nodes) {
      this.nodes.set(node.nodeId, {
        state: node.state,
        taskId: node.taskId,
        ...(node.params ? { params: node.params } : {}),
        ...(node.outcome ? { outcome: node.outcome } : {}),
      });
      if (node.outcome?.state === 'completed') this.outputs.set(node.nodeId, node.outcome.output);
    }
    return stored;
  }

  /** The providers of the nodes still to run, connected before any node is sent. */
  private async connect(): Promise<void> {
    const open = [...this.nodes].filter(([, node]) => !isTerminal(node.state)).map(([id]) => id);
    this.providers = await connectProviders(this.plan, open, this.options);
  }

  private routeKeyOf(nodeId: string): string {
    return routeKey(routeOf(this.plan, nodeId, this.options.terms));
  }

  private providerFor(nodeId: string): DagProvider {
    const provider = this.providers.get(this.routeKeyOf(nodeId));
    if (!provider) throw new RangeError(`no provider connected for ${nodeId}`);
    return provider;
  }

  private async loop(): Promise<void> {
    for (;;) {
      this.startReady();
      if (this.inFlight.size === 0) return;
      await Promise.race(this.inFlight.values());
    }
  }

  /** Starts nodes whose upstream nodes all completed, re-joining stored running ones first. */
  private startReady(): void {
    const limit = Math.max(1, this.options.maxParallel ?? 4);
    for (const id of this.plan.order) {
      if (this.stopping || this.inFlight.size >= limit) return;
      const node = this.nodes.get(id);
      if (!node || this.inFlight.has(id)) continue;
      const ready =
        node.state === 'running' ||
        (node.state === 'pending' &&
          (this.plan.upstream.get(id) ?? []).every((e) => this.outputs.has(e.from)));
      if (!ready) continue;
      const work = this.runNode(id, node).finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, work);
    }
  }

  private async runNode(id: string, node: LiveNode): Promise<void> {
    const rejoined = node.state === 'running' && node.params !== undefined;
    let params: InvokeParams;
    try {
      params = node.params ?? this.buildParams(id, node);
    } catch (error) {
      await this.finish(id, { state: 'failed', error: nodeError(error) });
      return;
    }
    node.abort = new AbortController();
    if (!rejoined) {
      node.state = 'running';
      node.params = params;
      // Stored before the send: a restart re-sends these params, with this task id (docs/acmp-dag.md).
      await this.persist(() => this.options.store.startNode(this.options.runId, { nodeId: id, params }));
    }
    this.emit({
      kind: 'node',
      nodeId: id,
      taskId: node.taskId,
      state: 'running',
      ...(rejoined ? { rejoined } : {}),
    });
    if (node.abort.signal.aborted) {
      await this.finish(id, { state: 'cancelled', reason: 'cancelled before its invoke was sent' });
      return;
    }
    const outcome = await executeNode(this.providerFor(id), params, {
      signal: node.abort.signal,
      onProgress: (p) => this.emit({ ...p, nodeId: id }),
    });
    await this.finish(id, outcome);
  }

  private buildParams(id: string, node: LiveNode): InvokeParams {
    const task = this.plan.tasks.get(id);
    if (!task) throw new RangeError(`unknown node ${id}`);
    const input = resolveInput(task.input, this.outputs, { taskId: id });
    const stream = this.streams.streamed.has(id);
    return nodeParams(task, { taskId: node.taskId, dagId: this.plan.dag.dag_id, input }, { stream });
  }

  /** Records a node's end; a failure cancels what needs its output (§4), or everything under fail-fast. */
  private async finish(id: string, outcome: NodeOutcome): Promise<void> {
    const node = this.nodes.get(id);
    if (!node || isTerminal(node.state)) return;
    node.state = outcome.state;
    node.outcome = outcome;
    if (outcome.state === 'completed') this.outputs.set(id, outcome.output);
    await this.persist(() => this.options.store.finishNode(this.options.runId, { nodeId: id, outcome }));
    this.emit({ kind: 'node', nodeId: id, taskId: node.taskId, state: outcome.state, outcome });
    if (outcome.state === 'failed') {
      // §4 "When a task fails": its dependents cannot execute without its output.
      for (const d of this.downstreamOf(id, { including: false })) this.cancelOne(d, `upstream ${id} failed`);
      if ((this.options.policy ?? 'fail-fast') === 'fail-fast') this.cancelAll(`fail-fast: ${id} failed`);
    }
  }

  /** Cancels the whole DAG: no new node starts; nodes in flight are aborted (acmp/cancel). */
  private cancelAll(reason: string): void {
    this.stopping = true;
    for (const id of this.plan.order) this.cancelOne(id, reason);
  }

  private cancelOne(id: string, reason: string): void {
    const node = this.nodes.get(id);
    if (!node || isTerminal(node.state)) return;
    if (node.abort) {
      // The node's own call ends as cancelled once the buyer has sent acmp/cancel (Layer 1 §3.7).
      node.abort.abort(new AcmpError(ACMP_CODE.cancelled, { reason }));
      return;
    }
    // Recorded through the ordered writes, which the run awaits (and whose failure fails it).
    this.finish(id, { state: 'cancelled', reason }).catch(() => undefined);
  }

  /** BFS over outgoing edges (Layer 2 §4 step 2). */
  private downstreamOf(start: string, options: { including: boolean }): string[] {
    const seen = new Set<string>([start]);
    const queue = [start];
    for (let id = queue.shift(); id !== undefined; id = queue.shift())
      for (const e of this.plan.downstream.get(id) ?? [])
        if (!seen.has(e.to)) {
          seen.add(e.to);
          queue.push(e.to);
        }
    if (!options.including) seen.delete(start);
    return [...seen];
  }

  /** Store writes in order, one at a time; a failed write fails the run. */
  private persist(write: () => Promise<void>): Promise<void> {
    const next = this.writes.then(write);
    this.writes = next.catch((error: unknown) => {
      this.writeError ??= error instanceof Error ? error : new Error('the run store failed');
    });
    return next;
  }

  private emit(event: DagEvent): void {
    this.options.onEvent?.(event);
  }

  private report(state?: StoredRun['state']): DagRunResult {
    return reportOf(this.plan, {
      runId: this.options.runId,
      nodes: this.nodes,
      budgetCu: this.options.terms.budgetCu ?? this.plan.dag.budget_cu ?? 0,
      ...(state !== undefined && state !== 'running' ? { state } : {}),
    });
  }
}

function isTerminal(state: NodeState): boolean {
  return state === 'completed' || state === 'failed' || state === 'cancelled';
}
