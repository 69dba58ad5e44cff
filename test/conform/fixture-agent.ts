import { sleep } from '../../src/shared/async.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import type { HostFlags } from '../../src/server/config.js';
import { startTestHost } from '../helpers/host.js';
import { startGrpcRewriteProxy } from './grpc-rewrite-proxy.js';
import { startRewriteProxy, type Rewrites } from './rewrite-proxy.js';

/**
 * The conformance kit's fixture agent: our real host, selling one slow, counting capability, and —
 * for each rule — a rewriting proxy in front that breaks exactly that rule (test/conform/breakages.ts).
 */

/**
 * Heartbeat interval of the fixture host; the kit's liveness window is 3 × this (900 ms). At 200 ms a
 * full parallel suite on 2 cores once starved the host for 648 ms; a tick run (1.2 s) still outlives four
 * intervals, and a stream without heartbeats still outlives the window.
 */
const HEARTBEAT_MS = 300;
/** Steps of a tick run, and their length: a run outlives several heartbeat intervals. */
const STEPS = 6;
const STEP_MS = 200;

/**
 * `tick`: `STEPS` chunks, one per step, each naming how many runs the host has made — so a second
 * execution of the same task (a broken idempotency) yields another output and another proof hash.
 */
function tick(): AcmpCapability {
  let runs = 0;
  return {
    id: 'tick',
    name: 'Tick',
    description: 'Counts a few slow steps; streams one chunk per step.',
    price: 0.001,
    examples: [{ type: 'text', data: 'go' }],
    handler: (_input: Payload, ctx) => {
      const run = ++runs;
      return (async function* () {
        for (let step = 0; step < STEPS; step++) {
          await sleep(STEP_MS, { signal: ctx.signal });
          yield { type: 'json', data: { run, step } };
        }
      })();
    },
  };
}

/**
 * The fixture host without a proxy: what every check must pass against. It serves all three A2A
 * transports (gRPC on an ephemeral port), as its card lists them.
 */
export async function startFixtureHost(
  flags: HostFlags = {},
): Promise<{ url: string; grpcUrl: string | undefined }> {
  const module = acmpModule({ capabilities: [tick()], heartbeatIntervalMs: HEARTBEAT_MS });
  return startTestHost({ modules: [module], flags: { 'grpc-port': '0', ...flags } });
}

/**
 * The fixture host behind proxies applying `rewrites`: one for HTTP (JSON-RPC, HTTP+JSON, MCP, the
 * card) and one for gRPC, which the card names instead of the host's gRPC port.
 */
export async function startBrokenAgent(rewrites: Rewrites): Promise<{ url: string }> {
  const host = await startFixtureHost();
  if (host.grpcUrl === undefined) throw new Error('the fixture host serves no gRPC');
  const grpc = await startGrpcRewriteProxy(host.grpcUrl, rewrites);
  return startRewriteProxy(host.url, rewrites, { [host.grpcUrl]: grpc.address });
}
