import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { grpcSend } from '../helpers/transports.js';
import { ACTIVATED, acmpMessage, invokeRoot, replyError, rpc, type RpcBody } from '../acmp/helpers.js';

afterEach(cleanup);

/**
 * docs/host.md "gRPC" — data parts on gRPC are google.protobuf.Value/Struct: numbers are IEEE-754 doubles,
 * as they are once any JSON text is parsed. These tests pin what that means for the JCS bytes the ACMP
 * proof and the ACPspec state depend on, across JSON-RPC, HTTP+JSON and gRPC.
 */

/** Answers with its input's data unchanged: the output, and so the proof hash, is what crossed the wire. */
const echo: AcmpCapability = {
  id: 'echo',
  price: 0,
  handler: (input) => Promise.resolve({ type: 'json', data: input.data }),
};

/**
 * Values JCS is sensitive to and every transport accepts (docs/host.md "Bad input": numbers JSON cannot
 * carry exactly and U+0000 are refused everywhere): safe integers at the edges, -0, tiny and fractional
 * doubles, nulls, key order rules, non-ASCII text.
 */
const TRICKY_TEXT =
  '{"maxSafe":9007199254740991,"minSafe":-9007199254740991,' +
  '"negZero":-0,"tiny":5e-324,"frac":0.1,"big":1.5e15,"nul":null,"":"empty key","10":"ten","2":"two",' +
  '"text":"é\\u2028😀","nested":{"b":1,"a":[null,true,{},[],-0,0.5]}}';

async function host() {
  return startTestHost({ flags: { 'grpc-port': '0' }, modules: [acmpModule({ capabilities: [echo] })] });
}

describe('data parts across the three transports (protobuf Value/Struct vs JSON)', () => {
  it('give the same output bytes and proof hash on JSON-RPC, HTTP+JSON and gRPC, verified by the buyer', async () => {
    const h = await host();
    const data = JSON.parse(TRICKY_TEXT) as Record<string, unknown>;
    const seen = [];
    for (const transport of ['JSONRPC', 'HTTP+JSON', 'GRPC'] as const) {
      const buyer = await createAcmpBuyer({ agentUrl: h.url, transport });
      // The buyer checks the proof against the output it received: a changed number would fail here.
      const result = await buyer.invoke({
        capability: 'echo',
        input: { type: 'json', data },
        max_price_cu: 1,
        proof_method: 'result-hash',
      });
      seen.push({
        hash: result.proof?.hash,
        bytes: canonicalJson((result.output as { data: unknown }).data),
      });
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[2]).toEqual(seen[0]);
    expect(seen[0]!.bytes).toBe(canonicalJson(JSON.parse(TRICKY_TEXT)));
  });

  it('refuse integers beyond ±(2^53−1) on every transport (JSON-RPC -32602 at the edge, gRPC INVALID_ARGUMENT), nothing run', async () => {
    const h = await host();
    const root = invokeRoot({
      capability: 'echo',
      input: { type: 'json', data: { n: 0 } },
      proof_method: 'result-hash',
    });
    const text = JSON.stringify(rpc('SendMessage', { message: acmpMessage(root) })).replace(
      '"n":0',
      '"n":9007199254740993',
    );
    const overJson = (await postJson(`${h.url}/a2a/jsonrpc`, text, ACTIVATED)).body as RpcBody;
    expect(overJson.error?.code).toBe(-32602);
    const big = acmpMessage({
      ...root,
      params: { ...root.params, input: { type: 'json', data: { n: 9007199254740993 } } },
    });
    const overGrpc = await grpcSend({ ...h, transport: 'grpc' }, big, ACTIVATED);
    expect(overGrpc.error).toMatchObject({ code: -32602, grpcStatus: 3 });
    const got = (
      await postJson(`${h.url}/a2a/jsonrpc`, rpc('GetTask', { id: root.params.task_id }), ACTIVATED)
    ).body as RpcBody;
    expect(got.error?.code).toBe(-32001);
  });

  it('give -0 (a double protobuf keeps, JSON text writes as 0) the bytes and hash of 0 on every transport', async () => {
    const h = await host();
    const seen = [];
    for (const transport of ['JSONRPC', 'GRPC'] as const) {
      const buyer = await createAcmpBuyer({ agentUrl: h.url, transport });
      const result = await buyer.invoke({
        capability: 'echo',
        input: { type: 'json', data: { z: -0, list: [-0] } },
        max_price_cu: 1,
        proof_method: 'result-hash',
      });
      seen.push({ hash: result.proof?.hash, bytes: canonicalJson(result.output) });
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]!.bytes).toBe('{"data":{"list":[0],"z":0},"type":"json"}');
  });

  it('refuse NaN, which only gRPC can carry, as JSON-RPC refuses 1e309: -32602 (INVALID_ARGUMENT), nothing run', async () => {
    const h = await host();
    const root = invokeRoot({ capability: 'echo', input: { type: 'json', data: { x: Number.NaN } } });
    const body = await grpcSend({ ...h, transport: 'grpc' }, acmpMessage(root), ACTIVATED);
    expect(body.error).toMatchObject({ code: -32602, grpcStatus: 3 });
    expect(replyError(body)).toBeUndefined();
    expect(body.result?.task).toBeUndefined();
  });
});
