import { afterEach, describe, expect, it } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { cleanup } from '../helpers/host.js';
import {
  acmpHost,
  ERAS,
  httpClient,
  invoke,
  Loose,
  notified,
  rpcError,
  sentiment,
  slowCount,
} from './helpers.js';

afterEach(cleanup);

/** A capability whose handler fails with a message that must never reach the wire. */
const broken: AcmpCapability = {
  id: 'broken',
  price: 0.001,
  handler: () => Promise.reject(new Error('db password is hunter2')),
};

async function errorHost(): Promise<Awaited<ReturnType<typeof acmpHost>>> {
  return acmpHost({
    capabilities: [...demoCapabilities({ stepMs: 5 }), broken],
    escrow: (escrowId) =>
      escrowId === 'esc_ok'
        ? Promise.resolve()
        : Promise.reject(new AcmpError(-33005, { escrow_id: escrowId })),
  });
}

describe.each(ERAS)('Layer 1 §3.3 error codes as JSON-RPC errors over MCP (%s)', (era) => {
  it('-32602 for params that fail the schema, with paths and no values', async () => {
    const { client } = await httpClient(await errorHost(), era);
    const error = await rpcError(invoke(client, sentiment({ capability: undefined, max_price_cu: 'lots' })));
    expect(error).toMatchObject({ code: -32602, message: 'Invalid params' });
    expect(JSON.stringify(error.data)).not.toContain('lots');
  });

  it('-33001 budget_exceeded with min_price_cu', async () => {
    const { client } = await httpClient(await errorHost(), era);
    const error = await rpcError(invoke(client, sentiment({ max_price_cu: 0.0001 })));
    expect(error).toMatchObject({
      code: -33001,
      message: 'Budget exceeded',
      data: { min_price_cu: expect.any(Number) as number },
    });
  });

  it('-33002 capability_not_found', async () => {
    const { client } = await httpClient(await errorHost(), era);
    expect(await rpcError(invoke(client, sentiment({ capability: 'teleport' })))).toMatchObject({
      code: -33002,
      data: { capability: 'teleport' },
    });
  });

  it('-33003 timeout when timeout_ms passes', async () => {
    const { client } = await httpClient(await errorHost(), era);
    expect((await rpcError(invoke(client, slowCount(10_000, { timeout_ms: 100 })))).code).toBe(-33003);
  });

  it('-33004 cancelled after acmp/cancel', async () => {
    const rec = await httpClient(await errorHost(), era);
    const params = slowCount(10_000);
    const error = rpcError(invoke(rec.client, params));
    await notified(rec, (n) => n.method === 'acmp/heartbeat');
    await rec.client.notification({
      method: 'acmp/cancel',
      params: { task_id: params.task_id, reason: 'test' },
    });
    expect(await error).toMatchObject({ code: -33004, data: { task_id: params.task_id } });
  });

  it('-33005 escrow_invalid from the escrow verifier', async () => {
    const { client } = await httpClient(await errorHost(), era);
    expect((await rpcError(invoke(client, sentiment({ escrow_id: 'esc_bad' })))).code).toBe(-33005);
    expect((await invoke(client, sentiment({ escrow_id: 'esc_ok' }))).output).toBeDefined();
  });

  it('-33006 proof_unsupported', async () => {
    const { client } = await httpClient(await errorHost(), era);
    expect(await rpcError(invoke(client, sentiment({ proof_method: 'tee-attestation' })))).toMatchObject({
      code: -33006,
    });
  });

  it('-33007 feature_unsupported for input_stream (input_streaming is advertised false)', async () => {
    const { client } = await httpClient(await errorHost(), era);
    expect(await rpcError(invoke(client, sentiment({ input_stream: true })))).toMatchObject({
      code: -33007,
      data: { feature: 'input_streaming' },
    });
    const chunk = { task_id: 'task_x', seq: 0, chunk: { type: 'text', data: 'a' }, final: true };
    expect((await rpcError(client.request({ method: 'acmp/inputChunk', params: chunk }, Loose))).code).toBe(
      -33007,
    );
  });

  it('-33099 internal with the generic message, never the cause', async () => {
    const { client } = await httpClient(await errorHost(), era);
    const error = await rpcError(invoke(client, sentiment({ capability: 'broken' })));
    expect(error).toMatchObject({ code: -33099, message: 'Internal provider error' });
    expect(JSON.stringify(error)).not.toContain('hunter2');
  });
});
