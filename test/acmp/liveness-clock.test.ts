import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createAcmpBuyer as pickAcmpBuyer } from '../../src/connect/acmp-buyer.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { mcpUrl } from '../mcp/helpers.js';
import { A2A_TRANSPORTS } from '../helpers/transports.js';
import { acmpHost, buyerOptions } from './helpers.js';

afterEach(cleanup);

const HEARTBEAT_MS = 150;
/** Over twice the 450 ms liveness window of a 150 ms heartbeat (Layer 1 §3.6: 3 × the interval). */
const LONGER_THAN_WINDOW_MS = 1_000;

/** Keeps this thread busy: neither timers nor sockets are served meanwhile, as under a long GC or no CPU. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * The liveness window measures the provider's silence while the buyer listens (Layer 1 §3.6; docs/acmp-core.md
 * "Buyer liveness"): the buyer's own time is not the provider's.
 */
describe.each(A2A_TRANSPORTS)(
  'buyer liveness clock (Layer 1 §3.6) with a 150 ms heartbeat over %s',
  (transport) => {
    const slowCount = {
      capability: 'slow-count',
      input: { type: 'json', data: { n: 100 } },
      max_price_cu: 1,
    };
    const host = shared(() => acmpHost({ transport, heartbeatIntervalMs: HEARTBEAT_MS }));

    it('is stopped while the consumer holds an event, so a slow consumer does not fail the task', async () => {
      const buyer = await createAcmpBuyer(buyerOptions(host()));
      const kinds: string[] = [];
      for await (const event of buyer.stream(slowCount)) {
        if (kinds.length === 0) await new Promise((resolve) => setTimeout(resolve, LONGER_THAN_WINDOW_MS));
        kinds.push(event.kind);
      }
      expect(kinds[0]).toBe('heartbeat');
      expect(kinds.at(-1)).toBe('result');
    });

    it('does not expire on a timer that ran late because the buyer itself could not run', async () => {
      const buyer = await createAcmpBuyer(buyerOptions(host()));
      const kinds: string[] = [];
      for await (const event of buyer.stream(slowCount)) {
        // The whole process stalls after the buyer resumed listening; the provider's heartbeats wait unread.
        if (kinds.length === 0) setTimeout(() => busyFor(LONGER_THAN_WINDOW_MS), 10);
        kinds.push(event.kind);
      }
      expect(kinds.at(-1)).toBe('result');
    });
  },
);

describe('the buyer chooses its liveness window (Layer 1 §3.6) on every binding', () => {
  const refused = { code: 'CONFIG_INVALID' };
  const zeroWindow = { livenessWindowMs: () => 0 };

  it('over A2A, MCP and the binding-picking buyer, which hand it to the core', async () => {
    const host = await acmpHost();
    await expect(createAcmpBuyer({ ...buyerOptions(host), ...zeroWindow })).rejects.toMatchObject(refused);
    await expect(
      connectMcpAcmpBuyer({ endpoint: { url: mcpUrl(host) }, ...zeroWindow }),
    ).rejects.toMatchObject(refused);
    for (const prefer of [['a2a'], ['mcp']] as const)
      await expect(pickAcmpBuyer({ agentUrl: host.url, prefer, ...zeroWindow })).rejects.toMatchObject(
        refused,
      );
  });
});
