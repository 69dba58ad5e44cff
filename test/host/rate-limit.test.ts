import * as grpc from '@grpc/grpc-js';
import { decodeStatus } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { createJsonLogger } from '../../src/shared/logger.js';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';

/** The request rate per caller (docs/host.md "Limits per caller"): every binding, refused in its own shape. */
afterEach(cleanup);

const A = 'agent-a-secret-0123456789';
const B = 'agent-b-secret-0123456789';
const TOKENS = [`a=${A}`, `b=${B}`];
const RATE = { 'rate-limit': '5', 'rate-window': '60' };

const bearer = (secret: string): Record<string, string> => ({ authorization: `Bearer ${secret}` });
const getTask = (id = 'task-unknown') => ({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } });

/** A host with the small rate above, tokens for a and b, and its log lines. */
async function limitedHost(flags: Record<string, unknown> = {}) {
  const lines: Record<string, unknown>[] = [];
  const logger = createJsonLogger({
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  const host = await startTestHost({
    flags: { token: TOKENS, ...RATE, ...flags },
    modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }) })],
    logger,
  });
  return { host, lines };
}

/** One anonymous JSON-RPC GetTask from the local address `localAddress` (loopback holds all of 127/8); its status. */
function postFrom(localAddress: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(getTask());
    const req = request(
      `${url}/a2a/jsonrpc`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends `n` JSON-RPC GetTask calls as `secret`; their HTTP statuses. */
async function jsonRpcBurst(url: string, n: number, secret = A): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++)
    statuses.push(
      (await postJson(`${url}/a2a/jsonrpc`, getTask(), { 'A2A-Version': '1.0', ...bearer(secret) })).status,
    );
  return statuses;
}

describe('the request rate per caller over HTTP', () => {
  it('answers a JSON-RPC burst beyond the rate with 429, Retry-After and -31429; another caller is served', async () => {
    const { host, lines } = await limitedHost();
    const statuses = await jsonRpcBurst(host.url, 5);
    expect(statuses.every((s) => s !== 429)).toBe(true);
    const refused = await postJson(`${host.url}/a2a/jsonrpc`, getTask(), {
      'A2A-Version': '1.0',
      ...bearer(A),
    });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -31429, data: [{ reason: 'RATE_LIMITED', domain: 'a2a-commerce' }] },
    });
    // B is not limited by A's burst.
    expect(await jsonRpcBurst(host.url, 3, B)).not.toContain(429);
    const logged = lines.filter((l) => l.event === 'limit.rate_refused');
    expect(logged).toEqual([
      expect.objectContaining({ binding: 'jsonrpc', caller: 'agent:a', level: 'warn' }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(A);
  });

  it('counts a caller over every binding: HTTP+JSON and MCP refuse once JSON-RPC used the rate up', async () => {
    const { host } = await limitedHost();
    await jsonRpcBurst(host.url, 5);
    const rest = await fetch(`${host.url}/a2a/rest/tasks/task-unknown`, {
      headers: { 'A2A-Version': '1.0', ...bearer(A) },
    });
    expect(rest.status).toBe(429);
    expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await rest.json()).toMatchObject({
      error: { code: 429, status: 'RESOURCE_EXHAUSTED', details: [{ reason: 'RATE_LIMITED' }] },
    });
    const mcp = await postJson(
      `${host.url}/mcp`,
      { jsonrpc: '2.0', id: 7, method: 'tools/list' },
      { accept: 'application/json, text/event-stream', ...bearer(A) },
    );
    expect(mcp.status).toBe(429);
    expect(mcp.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(mcp.body).toMatchObject({ jsonrpc: '2.0', error: { code: -31429, message: 'Too many requests' } });
    // Module routes (ACPspec over HTTPS) and the card sit behind the same guard.
    const acp = await fetch(`${host.url}/acp/v0.1/transactions/tx-1`, { headers: bearer(A) });
    expect(acp.status).toBe(429);
    expect(await acp.json()).toMatchObject({ error: { status: 'RESOURCE_EXHAUSTED' } });
  });

  it('limits anonymous callers per remote address: another address is still served', async () => {
    const { host } = await limitedHost({ token: [] });
    const statuses = { one: [] as number[], two: [] as number[] };
    for (let i = 0; i < 6; i++) statuses.one.push(await postFrom('127.0.0.1', host.url));
    expect(statuses.one.slice(0, 5)).not.toContain(429);
    expect(statuses.one[5]).toBe(429);
    statuses.two.push(await postFrom('127.0.0.2', host.url));
    expect(statuses.two).not.toContain(429);
  });
});

/** gRPC call metadata of a v1.0 call as `secret`. */
function v1Metadata(secret: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  metadata.set('authorization', `Bearer ${secret}`);
  return metadata;
}

/** A raw gRPC client of a host, and a GetTask as `secret` (none: anonymous) resolving with its error. */
function grpcGetTask(grpcUrl: string | undefined) {
  const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');
  const client = new RawA2A(grpcUrl!, grpc.credentials.createInsecure());
  const call = (secret?: string) =>
    new Promise<grpc.ServiceError | undefined>((resolve) => {
      const metadata = secret === undefined ? new grpc.Metadata() : v1Metadata(secret);
      (client as unknown as Record<string, (...args: unknown[]) => void>).getTask!.call(
        client,
        { id: 'task-unknown' },
        metadata,
        (error: grpc.ServiceError | null) => resolve(error ?? undefined),
      );
    });
  return { client, call };
}

describe('the request rate per caller over gRPC', () => {
  it('limits anonymous gRPC callers per peer address', async () => {
    const { host } = await limitedHost({ token: [], 'grpc-port': '0' });
    const { client, call } = grpcGetTask(host.grpcUrl);
    const codes: (number | undefined)[] = [];
    for (let i = 0; i < 6; i++) codes.push((await call())?.code);
    expect(codes.slice(0, 5)).not.toContain(grpc.status.RESOURCE_EXHAUSTED);
    expect(codes[5]).toBe(grpc.status.RESOURCE_EXHAUSTED);
    client.close();
  });

  it('answers calls beyond the rate RESOURCE_EXHAUSTED with RATE_LIMITED and retry-after; another caller is served', async () => {
    const { host, lines } = await limitedHost({ 'grpc-port': '0' });
    const { client, call } = grpcGetTask(host.grpcUrl);
    const codes: (number | undefined)[] = [];
    for (let i = 0; i < 5; i++) codes.push((await call(A))?.code);
    expect(codes).not.toContain(grpc.status.RESOURCE_EXHAUSTED);
    const refused = await call(A);
    expect(refused?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(Number(refused?.metadata.get('retry-after')[0])).toBeGreaterThanOrEqual(1);
    const status = decodeStatus(refused!.metadata.get('grpc-status-details-bin')[0] as Buffer);
    expect(status.details.map((d) => d.typeUrl)).toEqual([
      'type.googleapis.com/google.rpc.ErrorInfo',
      'type.googleapis.com/google.rpc.RetryInfo',
    ]);
    // Server-streaming calls are refused alike.
    const stream = (
      client as unknown as Record<string, (...args: unknown[]) => grpc.ClientReadableStream<unknown>>
    ).subscribeToTask!.call(client, { id: 'task-unknown' }, v1Metadata(A));
    const streamed = await new Promise<grpc.ServiceError>((resolve) => stream.on('error', resolve));
    expect(streamed.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect((await call(B))?.code).not.toBe(grpc.status.RESOURCE_EXHAUSTED);
    // The rate is one per caller over HTTP and gRPC alike.
    expect(await jsonRpcBurst(host.url, 1)).toEqual([429]);
    expect(lines.filter((l) => l.event === 'limit.rate_refused').map((l) => l.binding)).toEqual([
      'grpc',
      'grpc',
      'jsonrpc',
    ]);
    client.close();
  });
});
