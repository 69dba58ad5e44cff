import { afterEach, describe, expect, it } from 'vitest';
import { ACP_HTTP_PREFIX } from '../../src/acpspec/constants.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import type { HostModule } from '../../src/server/module.js';
import { cleanup, startTestHost } from '../helpers/host.js';

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
            const event = { event_id: `ev-${seq}`, type: 'note.added', occurred_at: '2025-06-01T12:00:00Z', actor: 'agent:x', subject: '/transaction', data: {} };
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
