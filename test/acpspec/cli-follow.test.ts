import { readFileSync } from 'node:fs';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ACP_HTTP_PREFIX, ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import type { HostModule } from '../../src/server/module.js';
import { DEFAULT_ACP_PRODUCER } from '../../src/cli/host-modules.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { closedPort, runCliProcess, startCliProcess } from '../helpers/cli-process.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

/**
 * A host whose events route answers every follow with a stream that ends at once; the streams listed in
 * `withEvent` (1-based) first deliver one event. Records when each stream was opened.
 */
async function endingStreamsHost(withEvent: number[]): Promise<{ url: string; opened: number[] }> {
  const opened: number[] = [];
  let seq = 0;
  const module: HostModule = {
    name: 'ending-streams',
    start: () => ({
      mountHttp(app) {
        app.get(`${ACP_HTTP_PREFIX}/transactions/:id/events`, (_req, res) => {
          opened.push(performance.now());
          res.status(200).setHeader('Content-Type', 'text/event-stream');
          if (withEvent.includes(opened.length)) {
            seq++;
            // A schema-valid event: the client decodes what a peer sends (issue 10).
            const event = {
              event_id: `ev-${seq}`,
              type: 'note.added',
              occurred_at: '2025-06-01T12:00:00Z',
              actor: 'agent:x',
              subject: '/transaction',
              data: {},
            };
            res.write(`id: ${seq}\nevent: acp.event\ndata: ${JSON.stringify(event)}\n\n`);
          }
          res.end();
        });
      },
    }),
  };
  const host = await startTestHost({ modules: [module] });
  return { url: host.url, opened };
}

describe('a2a-commerce acp events --follow', () => {
  it('reopens an ended stream after 250 ms, doubling while streams stay empty, and resets after an event', async () => {
    const host = await endingStreamsHost([3, 4]);
    const io: CliIo = { out: () => undefined, err: () => undefined, env: {} };
    const code = await runCli(['acp', 'events', host.url, 'tx-ends', '--follow', '--count', '2'], io);
    expect(code).toBe(0);
    expect(host.opened).toHaveLength(4);
    const gaps = host.opened.slice(1).map((t, i) => t - host.opened[i]!);
    // Timers fire no earlier than asked; a small allowance covers the two clocks' granularity.
    expect(gaps[0]).toBeGreaterThanOrEqual(245);
    expect(gaps[1]).toBeGreaterThanOrEqual(495);
    expect(gaps[2]).toBeGreaterThanOrEqual(245);
    expect(gaps[2]).toBeLessThan(995);
  });
});

describe('a2a-commerce acp events --follow across a receiver restart', () => {
  it('reconnects and resumes after the last seq it printed', async () => {
    const dataDir = tempDir();
    const flags = { 'no-personal-data': true };
    const modules = (): HostModule[] => [acpModule({ producer: { ...DEFAULT_ACP_PRODUCER } })];
    const first = await startTestHost({ dataDir, flags, modules: modules() });
    const port = new URL(first.url).port;
    // A fresh connection per request: a pooled one to the first host would be dead after the restart.
    const send = (url: string, name: string): Promise<{ status: number }> =>
      undiciFetch(`${url}${ACP_HTTP_PREFIX}/envelopes`, {
        method: 'POST',
        headers: { 'content-type': ACP_MEDIA_TYPE },
        body: readFileSync(new URL(`../../docs/examples/lifecycle/${name}`, import.meta.url)),
        dispatcher: new Agent({ pipelining: 0 }),
      });
    expect((await send(first.url, '01-inquiry.snapshot.json')).status).toBe(200);
    const follower = startCliProcess([
      'acp',
      'events',
      first.url,
      'tx-example-1',
      '--follow',
      '--count',
      '2',
    ]);
    await follower.waitForStdout(/"seq":1/);
    await first.close();
    const second = await startTestHost({ dataDir, flags: { ...flags, port }, modules: modules() });
    expect((await send(second.url, '02-lead.delta.json')).status).toBe(200);
    const run = await follower.done;
    expect(run.code).toBe(0);
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { seq: number }).seq),
    ).toEqual([1, 2]);
    expect(run.stderr).toMatch(/connection to \S+ lost \(.+\); reconnecting, then resuming after event 1/);
  });

  it('fails at once, with the cause, when the receiver cannot be reached at all', async () => {
    const run = await runCliProcess([
      'acp',
      'events',
      `http://127.0.0.1:${await closedPort()}`,
      'tx-1',
      '--follow',
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
  });
});
