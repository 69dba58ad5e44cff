import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { analyseSentiment, demoCapabilities, selectSentences } from './capabilities.js';
import { parseAcmpRoot } from '../acmp/wire/messages.js';
import { createAcmpProvider } from '../acmp/provider/provider.js';
import { collect } from '../../test/helpers/acmp-testing.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('demo capabilities', () => {
  it('judges the Layer 1 example sentence negative', () => {
    expect(
      analyseSentiment('The product quality has declined significantly over the past quarter.').sentiment,
    ).toBe('negative');
  });

  it('judges a negated positive as negative', () => {
    expect(analyseSentiment('This is not good.').sentiment).toBe('negative');
  });

  it('serves the seed invoke within its 0.005 CU ceiling', async () => {
    const seed = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../test/fixtures/acmp/seed-invoke.json'), 'utf8'),
    ) as { parts: { data: unknown }[] };
    const root = parseAcmpRoot(seed.parts[0]!.data);
    const provider = createAcmpProvider({ capabilities: demoCapabilities() });
    const [event] = await collect(
      provider.invoke(root.kind === 'request' ? root.params : undefined, { canStream: false }),
    );
    expect(event).toMatchObject({
      kind: 'result',
      result: { task_id: 'task_a7c923f1', output: { data: { sentiment: 'positive' } } },
    });
    expect(event?.kind === 'result' && event.result.cost_cu).toBeLessThanOrEqual(0.005);
  });

  it('keeps selected sentences in document order', () => {
    expect(selectSentences('Cats purr. Dogs bark loudly at cats. Cats sleep.', 2)).toEqual([
      'Cats purr.',
      'Cats sleep.',
    ]);
  });

  it('counts with heartbeats and honours the deadline', async () => {
    vi.useFakeTimers();
    const provider = createAcmpProvider({
      capabilities: demoCapabilities({ stepMs: 100 }),
      heartbeatIntervalMs: 1000,
    });
    const done = collect(
      provider.invoke(
        { task_id: 't_count', capability: 'slow-count', input: { type: 'json', data: { n: 3 } } },
        { canStream: true },
      ),
    );
    await vi.advanceTimersByTimeAsync(300);
    const events = await done;
    expect(
      events.filter((e) => e.kind === 'heartbeat').map((e) => e.kind === 'heartbeat' && e.params.progress),
    ).toEqual([1 / 3, 2 / 3, 1]);
    expect(events.at(-1)).toMatchObject({ kind: 'result', result: { output: { data: { count: 3 } } } });
    const late = collect(
      provider.invoke(
        {
          task_id: 't_late',
          capability: 'slow-count',
          input: { type: 'json', data: { n: 50 } },
          timeout_ms: 1000,
        },
        { canStream: true },
      ),
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect((await late).at(-1)).toMatchObject({ kind: 'error', error: { code: -33003 } });
  });
});
