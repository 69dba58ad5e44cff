import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, startCliProcess } from '../helpers/cli-process.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { counted, threeHosts } from './dag-helpers.js';

afterEach(cleanup);

const echo = (i: { data: unknown }) => ({ type: 'json', data: { echo: i.data as string } });

describe('durability (docs/acmp-dag.md "Durability")', () => {
  it('a runner killed with kill -9 mid-DAG resumes by run id: no node runs twice, the run finishes', async () => {
    const first = counted('first', echo, 50);
    const middle = counted('middle', echo, 1500);
    const last = counted('last', echo, 50);
    const [h0, h1, h2] = await threeHosts([[first], [middle], [last]]);
    const dir = tempDir();
    const file = join(dir, 'dag.json');
    const node = (id: string, url: string | undefined, input: unknown) => ({
      task_id: id,
      capability: id,
      input,
      max_price_cu: 0.01,
      provider: url,
    });
    writeFileSync(
      file,
      JSON.stringify({
        dag_id: 'dag_resume',
        budget_cu: 0.03,
        tasks: [
          node('first', h0?.url, { type: 'text', data: 'go' }),
          node('middle', h1?.url, { source: { from_task: 'first' } }),
          node('last', h2?.url, { source: { from_task: 'middle', field: 'data.echo' } }),
        ],
        edges: [
          { from: 'first', to: 'middle' },
          { from: 'middle', to: 'last' },
        ],
      }),
    );
    const args = [
      'acmp',
      'dag',
      'run',
      file,
      '--run-id',
      'run_kill9',
      '--db',
      `sqlite:${join(dir, 'runs.sqlite')}`,
      '--json',
    ];
    const runner = startCliProcess(args);
    await Promise.race([
      middle.started(1),
      runner.done.then((r) => {
        throw new Error(`exited early: ${r.stdout}${r.stderr}`);
      }),
    ]);
    runner.kill('SIGKILL');
    const killed = await runner.done;
    expect(killed.stdout).not.toMatch(/"result"/);

    const resumed = await runCliProcess(args);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const lines = resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toContainEqual({
      event: expect.objectContaining({ nodeId: 'middle', state: 'running', rejoined: true }) as unknown,
    });
    const result = lines.at(-1)?.result as { state: string; result: Record<string, unknown> };
    expect(result.state).toBe('completed');
    expect(result.result['last']).toEqual({
      type: 'json',
      data: { echo: { echo: 'go' } },
    });
    expect([first.runs(), middle.runs(), last.runs()]).toEqual([1, 1, 1]);

    // A finished run replays from the store: nothing is sent again.
    const again = await runCliProcess(args);
    expect(again.code).toBe(0);
    expect([first.runs(), middle.runs(), last.runs()]).toEqual([1, 1, 1]);
  }, 180_000);
});
