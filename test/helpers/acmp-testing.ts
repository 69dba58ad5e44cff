import type { InvokeParams, Payload } from '../../src/acmp/wire/task-messages.js';
import type { AcmpCapability, HandlerContext } from '../../src/acmp/provider/provider-types.js';

/**
 * Test builders shared by the ACMP core tests and, later, the binding tests. Not used at runtime.
 */

let counter = 0;

/** A valid `acmp/invoke` params object with a fresh task_id; override any field. */
export function buildInvokeParams(overrides: Partial<InvokeParams> = {}): InvokeParams {
  counter += 1;
  return {
    task_id: `task_test_${counter}`,
    capability: 'echo',
    input: { type: 'text', data: 'hello' },
    ...overrides,
  };
}

/** Drains an async iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

/** A controllable capability: counts runs, can be released by the test, records the signals it got. */
export interface ProbeCapability extends AcmpCapability {
  readonly runs: number;
  readonly signals: AbortSignal[];
  /** Lets every run finish; for a chunked probe, lets one more chunk through. */
  release(): void;
}

/**
 * A probe capability `id` returning `{type:'text', data:'echo:<input>'}` after `release()`, or, with
 * `chunks`, yielding those chunks one per `release()`.
 */
export function probeCapability(
  id = 'echo',
  options: { chunks?: Payload[]; price?: number; gated?: boolean } = {},
): ProbeCapability {
  let waiters: (() => void)[] = [];
  let released = options.gated === false;
  let permits = 0;
  const gate = (): Promise<void> => {
    if (released) return Promise.resolve();
    if (permits > 0) {
      permits -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => waiters.push(resolve));
  };
  const state = { runs: 0, signals: [] as AbortSignal[] };
  const capability: ProbeCapability = {
    id,
    price: options.price ?? 0.001,
    get runs() {
      return state.runs;
    },
    signals: state.signals,
    release() {
      if (options.chunks === undefined) released = true;
      else if (waiters.length === 0) permits += 1;
      const current = options.chunks === undefined ? waiters : waiters.slice(0, 1);
      waiters = options.chunks === undefined ? [] : waiters.slice(1);
      for (const w of current) w();
    },
    handler(input: Payload, ctx: HandlerContext) {
      state.runs += 1;
      state.signals.push(ctx.signal);
      if (options.chunks !== undefined) {
        const chunks = options.chunks;
        return (async function* () {
          for (const chunk of chunks) {
            await gate();
            yield chunk;
          }
        })();
      }
      return gate().then(() => ({
        type: 'text',
        data: `echo:${typeof input.data === 'string' ? input.data : JSON.stringify(input.data)}`,
      }));
    },
  };
  return capability;
}
