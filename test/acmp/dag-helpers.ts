import { readFileSync } from 'node:fs';
import type { DagEvent, DagRunResult } from '../../src/acmp/dag/dag-events.js';
import { DagRunner, type DagRunOptions } from '../../src/acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../../src/storage/memory/dag-run-store-memory.js';
import type { AcmpCapability, HandlerContext } from '../../src/acmp/provider/provider-types.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { ConnectDagBuyerPort } from '../../src/connect/dag-buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { onCleanup } from '../helpers/host.js';
import { acmpHost, type AcmpTestHost } from './helpers.js';

/** A capability of the DAG tests that counts its executions and how many ran at once. */
export type CountedCapability = AcmpCapability & {
  runs: () => number;
  maxConcurrent: () => number;
  aborted: () => number;
  /** Resolves once the capability has started `n` executions in all. */
  started: (n: number) => Promise<void>;
};

/**
 * A capability computing `compute(input)` after `ms` (honouring the signal), counting runs, the most
 * that ran at once and the aborts it saw (an `acmp/cancel` reaching it).
 */
export function counted(id: string, compute: (input: Payload) => Payload, ms = 0): CountedCapability {
  let runs = 0;
  let running = 0;
  let max = 0;
  let aborted = 0;
  const waiters = new Set<() => void>();
  return {
    id,
    price: 0.001,
    runs: () => runs,
    maxConcurrent: () => max,
    aborted: () => aborted,
    started: (n) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (runs < n) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      }),
    async handler(input, ctx: HandlerContext) {
      runs += 1;
      for (const check of [...waiters]) check();
      running += 1;
      max = Math.max(max, running);
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          ctx.signal.addEventListener('abort', () => {
            aborted += 1;
            clearTimeout(timer);
            reject(ctx.signal.reason as Error);
          });
        });
        return compute(input);
      } finally {
        running -= 1;
      }
    },
  };
}

/** `text-split` (Layer 2 §6.2): sentences of a text as `data.chunks`. */
export const splitText = (input: Payload): Payload => ({
  type: 'json',
  data: { chunks: (typeof input.data === 'string' ? input.data : '').split(/(?<=\.)\s+/) },
});

/** `result-aggregation` (§6.2): the sentiments of an ordered array of outputs. */
export const aggregate = (input: Payload): Payload => ({
  type: 'json',
  data: {
    count: Array.isArray(input.data) ? input.data.length : 0,
    sentiments: (Array.isArray(input.data) ? input.data : []).map(
      (o) => (o as { data: { sentiment: string } }).data.sentiment,
    ),
  },
});

/** Three provider hosts on loopback, each with the demo capabilities plus its own. */
export async function threeHosts(
  extra: [AcmpCapability[], AcmpCapability[], AcmpCapability[]],
): Promise<AcmpTestHost[]> {
  return Promise.all(
    extra.map((caps) => acmpHost({ capabilities: [...demoCapabilities({ stepMs: 5 }), ...caps] })),
  );
}

/** The DAG of Layer 2 §3, parsed from the spec's text. */
export function specDag(): {
  dag_id: string;
  tasks: Record<string, unknown>[];
  edges: Record<string, unknown>[];
} {
  return JSON.parse(
    readFileSync(new URL('../fixtures/dag/spec-3-dag.json', import.meta.url), 'utf8'),
  ) as ReturnType<typeof specDag>;
}

/** A runner over the real bindings with a memory store; events are collected. */
export function runner(
  dag: unknown,
  options: Partial<DagRunOptions> = {},
): {
  runner: DagRunner;
  events: DagEvent[];
  run: () => Promise<DagRunResult>;
  waitFor: (match: (e: DagEvent) => boolean) => Promise<void>;
} {
  const events: DagEvent[] = [];
  const waiters = new Set<() => void>();
  const port = new ConnectDagBuyerPort();
  onCleanup(() => port.close());
  const r = new DagRunner(dag, {
    runId: `run_${crypto.randomUUID()}`,
    store: new MemoryDagRunStore(),
    port,
    terms: { budgetCu: 1 },
    onEvent: (e) => {
      events.push(e);
      for (const check of waiters) check();
    },
    ...options,
  });
  const waitFor = (match: (e: DagEvent) => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!events.some(match)) return;
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });
  return { runner: r, events, run: () => r.run(), waitFor };
}

/** Matches a node event. */
export function nodeIs(nodeId: string, state: string): (e: DagEvent) => boolean {
  return (e) => e.kind === 'node' && e.nodeId === nodeId && e.state === state;
}
