import { afterEach, describe, expect, it } from 'vitest';
import type { DagBuyerPort } from '../../src/acmp/dag/dag-ports.js';
import { DagRunner } from '../../src/acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../../src/storage/memory/dag-run-store-memory.js';
import { ConnectDagBuyerPort } from '../../src/connect/dag-buyer.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { counted } from './dag-helpers.js';
import { acmpHost } from './helpers.js';

afterEach(cleanup);

const mid = counted('mid', (i) => ({ type: 'json', data: { echo: i.data } }), 300);
const host = shared(() =>
  acmpHost({ capabilities: [...demoCapabilities({ stepMs: 5 }), mid], transport: 'grpc' }),
);

/** The real port, frozen once each invoke is sent: the runner neither reads on nor cancels (kill -9). */
function frozenPort(): DagBuyerPort {
  const real = new ConnectDagBuyerPort();
  onCleanup(() => real.close());
  return {
    close: () => real.close(),
    async provider(url, options) {
      const provider = await real.provider(url, options);
      return {
        capabilityObject: provider.capabilityObject,
        // Never yields: the process is gone.
        async *stream(params, call) {
          void provider
            .stream(params, call)
            [Symbol.asyncIterator]()
            .next()
            .catch(() => undefined);
          await new Promise<never>(() => undefined);
        },
      };
    },
  };
}

function runnerOn(dag: unknown, runId: string, store: MemoryDagRunStore, port: DagBuyerPort): DagRunner {
  return new DagRunner(dag, { runId, store, port, terms: { budgetCu: 1 } });
}

describe('a resumed run re-joins a running node over its binding (docs/acmp-dag.md "Durability")', () => {
  it.each(['HTTP+JSON', 'GRPC', 'MCP'] as const)(
    'over %s: the provider runs the node once, the resumed runner gets its result',
    async (binding) => {
      const dag = {
        dag_id: 'dag_rejoin',
        tasks: [
          {
            task_id: 'mid',
            capability: 'mid',
            input: { type: 'text', data: binding },
            max_price_cu: 0.01,
            provider: host().url,
            binding,
          },
        ],
        edges: [],
      };
      const store = new MemoryDagRunStore();
      const runId = `run_${crypto.randomUUID()}`;
      const runsBefore = mid.runs();
      void runnerOn(dag, runId, store, frozenPort()).run();
      await mid.started(runsBefore + 1);

      const port = new ConnectDagBuyerPort();
      onCleanup(() => port.close());
      const result = await runnerOn(dag, runId, store, port).run();
      expect(result.state).toBe('completed');
      expect(result.result['mid']).toEqual({ type: 'json', data: { echo: binding } });
      expect(mid.runs()).toBe(runsBefore + 1);
    },
  );
});
