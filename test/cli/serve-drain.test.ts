import { afterEach, describe, expect, it } from 'vitest';
import {
  ACTIVATED,
  acmpHost,
  acmpMessage,
  invokeRoot,
  jsonRpcUrl,
  rpc,
  type RpcBody,
} from '../acmp/helpers.js';
import { startServeProcess } from '../helpers/cli-process.js';
import { cleanup, postJson, tempDir } from '../helpers/host.js';

afterEach(cleanup);

/** `serve` on SIGTERM (docs/operations.md "Health, readiness and shutdown"). */

const GRACE_MS = 20_000;

describe('serve on SIGTERM', () => {
  it('drains, lets the running task finish and exits 0 within the grace', async () => {
    const dataDir = tempDir();
    const args = ['--port', '0', '--no-tls', '--modules', 'acmp', '--data-dir', dataDir];
    const serve = await startServeProcess([...args, '--shutdown-grace-ms', String(GRACE_MS)]);
    expect((await fetch(`${serve.url}/readyz`)).status).toBe(200);
    // slow-count: 10 steps of 100 ms, running when the signal arrives.
    const root = invokeRoot({
      capability: 'slow-count',
      input: { type: 'json', data: { n: 10 } },
      max_price_cu: 1,
    });
    const started = (
      await postJson(
        jsonRpcUrl(serve),
        rpc('SendMessage', { message: acmpMessage(root), configuration: { returnImmediately: true } }),
        ACTIVATED,
      )
    ).body as RpcBody;
    expect(started.result?.task?.status.state).toBe('TASK_STATE_WORKING');
    const signalled = Date.now();
    const run = await serve.stop('SIGTERM');
    expect(run.code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(GRACE_MS);
    expect(run.stderr).toContain('"host.draining"');
    expect(run.stderr).toContain('"host.drained"');

    // The task finished during the drain: its stored outcome is the result, not -33099.
    const again = await acmpHost({ dataDir });
    const got = (await postJson(jsonRpcUrl(again), rpc('GetTask', { id: root.params.task_id }), ACTIVATED))
      .body as RpcBody;
    expect(got.result?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(got.result?.status?.message?.parts[0]?.data).toMatchObject({
      acmp_result: { output: { data: { count: 10 } } },
    });
  });
});
