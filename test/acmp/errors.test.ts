import { afterEach, describe, expect, it } from 'vitest';
import { AcmpError, ACMP_CODE } from '../../src/acmp/wire/errors.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { cleanup } from '../helpers/host.js';
import { postJson } from '../helpers/host.js';
import { A2A_TRANSPORTS, type A2ATransport } from '../helpers/transports.js';
import {
  ACTIVATED,
  acmpHost,
  acmpMessage,
  callRaw,
  invokeRoot,
  jsonRpcUrl,
  replyError,
  replyRoot,
  rpc,
  sendRaw,
  streamRaw,
  streamRoot,
  subscribeRaw,
  type RawHost,
  type RpcBody,
} from './helpers.js';

afterEach(cleanup);

const SECRET = 'postgres://admin:hunter2@db.internal/prod';

const failing: AcmpCapability = {
  id: 'explode',
  price: 0.001,
  handler: () => Promise.reject(new Error(`connection to ${SECRET} refused`)),
};

const escrow = (escrowId: string): Promise<void> =>
  escrowId === 'esc_ok'
    ? Promise.resolve()
    : Promise.reject(new AcmpError(ACMP_CODE.escrowInvalid, { escrow_id: escrowId, reason: 'expired' }));

async function host(transport: A2ATransport): Promise<RawHost> {
  return acmpHost({ transport, capabilities: [...demoCapabilities({ stepMs: 5 }), failing], escrow });
}

/** Seed §3.4: the ACMP error is in the payload and the enclosing A2A task is `completed`. */
function expectPayloadError(
  body: RpcBody,
  code: number,
): { code: number; message: string; data?: Record<string, unknown> } {
  expect(body.error).toBeUndefined();
  expect(body.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
  const error = replyError(body);
  expect(error?.code).toBe(code);
  return error!;
}

/**
 * A refusal before any work (docs/acmp-a2a-binding.md §5): an agent Message carrying the `acmp_error`, and
 * no task — GetTask of the id is TaskNotFound, nothing was stored or run.
 */
async function expectRefusal(
  h: RawHost,
  root: ReturnType<typeof invokeRoot>,
  code: number,
): Promise<{ code: number; message: string; data?: Record<string, unknown> }> {
  const body = await sendRaw(h, acmpMessage(root));
  expect(body.error).toBeUndefined();
  expect(body.result?.task).toBeUndefined();
  const error = replyError(body);
  expect(error?.code).toBe(code);
  const got = await callRaw(h, 'GetTask', root.params.task_id as string);
  expect(got.error?.code).toBe(-32001);
  return error!;
}

describe.each(A2A_TRANSPORTS)('over %s', (transport) => {
  describe('errors stay in the payload; the A2A task completes (A2A binding §3.4, Layer 1 §3.3)', () => {
    it('-33001 when the price exceeds max_price_cu, with min_price_cu, and no task is left behind', async () => {
      const error = await expectRefusal(await host(transport), invokeRoot({ max_price_cu: 0.0001 }), -33001);
      expect(error.data?.min_price_cu).toBeGreaterThan(0.0001);
    });

    it('-33001 leaves nothing behind: a retry within budget runs the task', async () => {
      const h = await host(transport);
      const root = invokeRoot({ max_price_cu: 0.0001 });
      await expectRefusal(h, root, -33001);
      const retried = replyRoot(
        await sendRaw(h, acmpMessage({ ...root, params: { ...root.params, max_price_cu: 1 } })),
      );
      expect(retried?.acmp_result).toBeDefined();
    });

    it('-32602 for params JSON cannot carry exactly (1e309), and nothing is stored or run', async () => {
      const h = await host(transport);
      const root = invokeRoot();
      const text = JSON.stringify(rpc('SendMessage', { message: acmpMessage(root) })).replace(
        '"max_price_cu":',
        '"note":1e309,"max_price_cu":',
      );
      // gRPC carries the double JSON.parse makes of 1e309 (Infinity) as it is: the same value reaches the host.
      const body =
        transport === 'grpc'
          ? await sendRaw(h, (JSON.parse(text) as { params: { message: unknown } }).params.message)
          : ((await postJson(jsonRpcUrl(h), text, ACTIVATED)).body as RpcBody);
      // Refused at the host's value edge on every transport (docs/host.md "Bad input"), before the binding.
      expect(body.error?.code ?? replyError(body)?.code).toBe(-32602);
      expect(body.result?.task).toBeUndefined();
      for (let attempt = 0; attempt < 2; attempt++) {
        const got = await callRaw(h, 'GetTask', root.params.task_id as string);
        expect(got.error?.code).toBe(-32001);
      }
      const sub = await subscribeRaw(h, root.params.task_id as string);
      expect(JSON.stringify(sub)).not.toContain('acmp_result');
    });

    it('-33001 is also refused without a task as the first reply of a stream', async () => {
      const results = [];
      for await (const r of streamRaw(
        await host(transport),
        acmpMessage(invokeRoot({ max_price_cu: 0.0001 })),
      ))
        results.push(r);
      expect(results).toHaveLength(1);
      expect((streamRoot(results[0]!)?.acmp_error as { code: number }).code).toBe(-33001);
      expect(results[0]!.task).toBeUndefined();
    });

    it('never bills more than max_price_cu (Layer 1 §3.2)', async () => {
      const h = await host(transport);
      for (const max of [0.005, 0.0021, 1]) {
        const result = replyRoot(await sendRaw(h, acmpMessage(invokeRoot({ max_price_cu: max }))))
          ?.acmp_result as { cost_cu: number } | undefined;
        expect(result?.cost_cu).toBeLessThanOrEqual(max);
      }
    });

    it('-33002 for an unknown capability', async () => {
      await expectRefusal(await host(transport), invokeRoot({ capability: 'time-travel' }), -33002);
    });

    it('-33003 when timeout_ms passes: a hard deadline on the provider side too', async () => {
      const root = invokeRoot({
        capability: 'slow-count',
        input: { type: 'json', data: { n: 10_000 } },
        max_price_cu: 5,
        timeout_ms: 60,
      });
      const started = Date.now();
      const error = expectPayloadError(await sendRaw(await host(transport), acmpMessage(root)), -33003);
      expect(error.data?.task_id).toBe(root.params.task_id);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('-33005 from the pluggable escrow verifier', async () => {
      const error = await expectRefusal(
        await host(transport),
        invokeRoot({ escrow_id: 'esc_expired' }),
        -33005,
      );
      expect(error.data).toMatchObject({ escrow_id: 'esc_expired', reason: 'expired' });
    });

    it('runs when the escrow verifier accepts', async () => {
      const body = await sendRaw(await host(transport), acmpMessage(invokeRoot({ escrow_id: 'esc_ok' })));
      expect(replyRoot(body)?.acmp_result).toBeDefined();
    });

    it('-33006 for an unsupported proof_method', async () => {
      await expectRefusal(await host(transport), invokeRoot({ proof_method: 'tee-attestation' }), -33006);
    });

    it('-33007 for input_stream: true (A2A binding §3.3 declines input streaming)', async () => {
      const root = invokeRoot({ input_stream: true });
      delete root.params.input;
      const error = await expectRefusal(await host(transport), root, -33007);
      expect(error.data?.feature).toBe('input_streaming');
    });

    it('-33007 for acmp/inputChunk messages', async () => {
      const root = {
        acmp_method: 'acmp/inputChunk',
        params: { task_id: 'task_ic', seq: 0, chunk: { type: 'text', data: 'x' } },
      };
      expect(replyError(await sendRaw(await host(transport), acmpMessage(root)))?.code).toBe(-33007);
    });

    it('-33007 for stream: true when output streaming is off (over SendStreamingMessage)', async () => {
      const h = await acmpHost({ transport, outputStreaming: false });
      const results = [];
      for await (const r of streamRaw(h, acmpMessage(invokeRoot({ stream: true })))) results.push(r);
      expect(results).toHaveLength(1);
      expect((streamRoot(results[0]!)?.acmp_error as { code: number }).code).toBe(-33007);
      expect(results[0]!.task).toBeUndefined();
    });

    it('-33007 for stream: true over SendMessage (the connection cannot carry chunks)', async () => {
      await expectRefusal(await host(transport), invokeRoot({ stream: true }), -33007);
    });

    it('-33099 for a throwing handler, with no internal detail leaked', async () => {
      const body = await sendRaw(await host(transport), acmpMessage(invokeRoot({ capability: 'explode' })));
      const error = expectPayloadError(body, -33099);
      expect(error.message).toBe('Internal provider error');
      const wire = JSON.stringify(body);
      expect(wire).not.toContain('hunter2');
      expect(wire).not.toContain('db.internal');
      expect(wire).not.toMatch(/at .*\.ts:\d+/);
    });
  });
});
