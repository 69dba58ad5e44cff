import { afterEach, describe, expect, it } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { cleanup, postJson, tempDir } from '../helpers/host.js';
import { ACTIVATED, acmpHost, acmpMessage, invokeRoot, jsonRpcUrl, rpc, type RpcBody } from './helpers.js';

afterEach(cleanup);

describe('graceful shutdown', () => {
  it('lets a running invoke finish and saves its final state before the database closes', async () => {
    const dataDir = tempDir();
    const host = await acmpHost({ dataDir, capabilities: demoCapabilities({ stepMs: 20 }) });
    const root = invokeRoot({
      capability: 'slow-count',
      input: { type: 'json', data: { n: 10 } },
      max_price_cu: 1,
    });
    const message = acmpMessage(root);
    const started = (
      await postJson(
        jsonRpcUrl(host),
        rpc('SendMessage', { message, configuration: { returnImmediately: true } }),
        ACTIVATED,
      )
    ).body as RpcBody;
    expect(started.result?.task?.status.state).toBe('TASK_STATE_WORKING');
    await host.close();

    const again = await acmpHost({ dataDir });
    const got = (await postJson(jsonRpcUrl(again), rpc('GetTask', { id: root.params.task_id }), ACTIVATED))
      .body as RpcBody;
    expect(got.result?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(got.result?.status?.message?.parts[0]?.data).toMatchObject({
      acmp_result: { output: { data: { count: 10 } } },
    });
  });
});
