import type { DagEvent } from '../acmp/dag/dag-events.js';
import type { NodeOutcome, NodeState } from '../acmp/dag/dag-ports.js';
import { describeProgress } from './acmp-progress.js';
import type { CliIo } from './io.js';

/** The live view of a DAG run: one line per node on a terminal, one line per event otherwise. */
export interface DagProgressView {
  update(event: DagEvent): void;
  done(): void;
}

/**
 * A view for `acmp dag run`: on a terminal a block of one line per node, redrawn in place (state, task
 * id, last heartbeat or chunk count, cost); otherwise plain `node <id> <state> …` lines on stderr.
 */
export function createDagProgressView(
  io: CliIo,
  options: { tty: boolean; nodes: readonly string[]; write?: (text: string) => void },
): DagProgressView {
  const write = options.write ?? ((t: string) => void process.stderr.write(t));
  return options.tty ? new TerminalDagView(options.nodes, write) : new PlainDagView(io);
}

/** One node's line: `id  state  detail`. */
function lineOf(id: string, row: NodeRow): string {
  return `${id.padEnd(20)} ${row.state.padEnd(9)} ${row.detail}`;
}

interface NodeRow {
  state: NodeState;
  detail: string;
  counts: { chunks: number; chars: number };
}

/** What a node's end says: its cost, or why it failed or was cancelled. */
function outcomeText(outcome: NodeOutcome | undefined): string {
  if (!outcome) return '';
  switch (outcome.state) {
    case 'completed':
      return `${outcome.costCu} CU`;
    case 'failed':
      return `error ${String(outcome.error.code)}: ${outcome.error.message}`;
    case 'cancelled':
      return outcome.reason;
  }
}

/** Applies a node's event to its row. */
function rowUpdate(event: DagEvent, row: NodeRow): void {
  switch (event.kind) {
    case 'node':
      row.state = event.state;
      row.detail =
        event.state === 'running'
          ? `${event.taskId}${event.rejoined ? ' (re-joined)' : ''}`
          : outcomeText(event.outcome);
      return;
    case 'chunk':
      row.detail = describeProgress({ kind: 'chunk', params: event.params }, row.counts) ?? row.detail;
      return;
    case 'heartbeat':
      row.detail = describeProgress({ kind: 'heartbeat', params: event.params }, row.counts) ?? row.detail;
      return;
    case 'fallback':
      return;
  }
}

class TerminalDagView implements DagProgressView {
  private readonly rows = new Map<string, NodeRow>();
  private drawn = 0;

  constructor(
    nodes: readonly string[],
    private readonly write: (text: string) => void,
  ) {
    for (const id of nodes)
      this.rows.set(id, { state: 'pending', detail: '', counts: { chunks: 0, chars: 0 } });
  }

  update(event: DagEvent): void {
    if (event.kind === 'fallback') return;
    const row = this.rows.get(event.nodeId);
    if (!row) return;
    rowUpdate(event, row);
    this.draw();
  }

  done(): void {
    this.drawn = 0;
  }

  private draw(): void {
    const up = this.drawn > 0 ? `\x1b[${this.drawn}F` : '';
    const lines = [...this.rows].map(([id, row]) => `\x1b[K${lineOf(id, row)}\n`);
    this.write(up + lines.join(''));
    this.drawn = lines.length;
  }
}

class PlainDagView implements DagProgressView {
  private readonly counts = new Map<string, { chunks: number; chars: number }>();

  constructor(private readonly io: CliIo) {}

  update(event: DagEvent): void {
    if (event.kind === 'fallback') {
      this.io.err(`edge ${event.from} → ${event.to} not streamed: ${event.reason}`);
      return;
    }
    const counts = this.counts.get(event.nodeId) ?? { chunks: 0, chars: 0 };
    this.counts.set(event.nodeId, counts);
    const row: NodeRow = { state: 'running', detail: '', counts };
    rowUpdate(event, row);
    this.io.err(`node ${lineOf(event.nodeId, row)}`);
  }

  done(): void {
    // Every update was a line of its own.
  }
}
