import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { countingCapability } from './helpers.js';
import { sessionHost } from './session-helpers.js';

afterEach(cleanup);

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    out: (t) => stdout.push(t),
    err: (t) => stderr.push(t),
    env: { A2AC_TOKEN: 'agent-a-secret-0123456789' },
    stdout,
    stderr,
  };
}

const json = <T>(io: { stdout: string[] }): T => JSON.parse(io.stdout.join('\n')) as T;

describe('a2a-commerce acmp quote / negotiate / invoke under an agreement', () => {
  it('quote prints a flat offer', async () => {
    const { host } = await sessionHost();
    const io = capture();
    expect(
      await runCli(
        [
          'acmp',
          'quote',
          host.url,
          '--capability',
          'count-runs',
          '--max-price',
          '0.01',
          '--valid-ms',
          '2000',
        ],
        io,
      ),
    ).toBe(0);
    expect(json<{ price_cu: number; offer_id: string }>(io)).toMatchObject({
      price_cu: 0.001,
      capability: 'count-runs',
    });
  });

  it('negotiate --counter-price agrees in a session and writes the agreement; invoke --agreement runs it at that price', async () => {
    const { host, counter } = await sessionHost();
    const file = join(tempDir(), 'agreement.json');
    const io = capture();
    expect(
      await runCli(
        [
          'acmp',
          'negotiate',
          host.url,
          '--capability',
          'count-runs',
          '--max-price',
          '0.01',
          '--counter-price',
          '0.0009',
          '--input',
          'hello',
          '--out',
          file,
        ],
        io,
      ),
    ).toBe(0);
    const agreement = json<{ ack: { price_cu: number }; session?: { taskId: string } }>(io);
    expect(agreement.ack.price_cu).toBe(0.0009);
    expect(agreement.session?.taskId).toMatch(/^neg_/);
    const run = capture();
    expect(await runCli(['acmp', 'invoke', host.url, '--agreement', file], run)).toBe(0);
    expect(json<{ cost_cu: number }>(run).cost_cu).toBe(0.0009);
    expect(counter.runs()).toBe(1);
  });

  it('negotiate across several agents accepts the cheapest; invoke --offer runs the flat agreement', async () => {
    const hosts = await Promise.all(
      [0.003, 0.002].map((price) =>
        startTestHost({
          flags: { token: ['a=agent-a-secret-0123456789'] },
          modules: [acmpModule({ capabilities: [{ ...countingCapability(), price }], negotiation: true })],
        }),
      ),
    );
    const io = capture();
    expect(
      await runCli(
        [
          'acmp',
          'negotiate',
          ...hosts.map((h) => h.url),
          '--capability',
          'count-runs',
          '--max-price',
          '0.01',
        ],
        io,
      ),
    ).toBe(0);
    const agreement = json<{ agent_url: string; offer: { offer_id: string }; ack: { price_cu: number } }>(io);
    expect(agreement.agent_url).toBe(hosts[1]!.url);
    expect(agreement.ack.price_cu).toBe(0.002);
    const run = capture();
    const flags = [
      '--capability',
      'count-runs',
      '--input',
      'x',
      '--max-price',
      '0.002',
      '--offer',
      agreement.offer.offer_id,
    ];
    expect(await runCli(['acmp', 'invoke', hosts[1]!.url, ...flags], run)).toBe(0);
    expect(json<{ cost_cu: number }>(run).cost_cu).toBe(0.002);
  });

  it('a refusal is printed with its ACMP code (exit 1)', async () => {
    const { host } = await sessionHost();
    const io = capture();
    expect(
      await runCli(
        ['acmp', 'negotiate', host.url, '--capability', 'count-runs', '--max-price', '0.0001'],
        io,
      ),
    ).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/error -33001 \(budget_exceeded\)/);
  });
});
