import type { InvokeParams } from '../../acmp/wire/task-messages.js';
import type { DagRunStore, NodeOutcome, RunState, StoredNode, StoredRun } from '../../acmp/dag/dag-ports.js';

/** {@link DagRunStore} in memory: for one-shot runs and tests (a restart forgets it). */
export class MemoryDagRunStore implements DagRunStore {
  private readonly runs = new Map<
    string,
    { run: Omit<StoredRun, 'nodes'>; nodes: Map<string, StoredNode> }
  >();

  createRun(run: Omit<StoredRun, 'state'>): Promise<'created' | 'exists'> {
    if (this.runs.has(run.runId)) return Promise.resolve('exists');
    const { nodes, ...rest } = run;
    this.runs.set(run.runId, {
      run: { ...rest, state: 'running' },
      nodes: new Map(nodes.map((n) => [n.nodeId, n])),
    });
    return Promise.resolve('created');
  }

  loadRun(runId: string): Promise<StoredRun | undefined> {
    const entry = this.runs.get(runId);
    return Promise.resolve(entry && structuredClone({ ...entry.run, nodes: [...entry.nodes.values()] }));
  }

  startNode(runId: string, node: { nodeId: string; params: InvokeParams }): Promise<void> {
    this.update(runId, node.nodeId, (n) =>
      n.state === 'pending' ? { ...n, state: 'running', params: structuredClone(node.params) } : n,
    );
    return Promise.resolve();
  }

  finishNode(runId: string, node: { nodeId: string; outcome: NodeOutcome }): Promise<void> {
    this.update(runId, node.nodeId, (n) =>
      n.state === 'pending' || n.state === 'running'
        ? { ...n, state: node.outcome.state, outcome: structuredClone(node.outcome) }
        : n,
    );
    return Promise.resolve();
  }

  finishRun(runId: string, state: Exclude<RunState, 'running'>): Promise<void> {
    const entry = this.runs.get(runId);
    if (entry) entry.run = { ...entry.run, state };
    return Promise.resolve();
  }

  private update(runId: string, nodeId: string, change: (node: StoredNode) => StoredNode): void {
    const nodes = this.runs.get(runId)?.nodes;
    const node = nodes?.get(nodeId);
    if (nodes && node) nodes.set(nodeId, change(node));
  }
}
