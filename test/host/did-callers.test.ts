import { generateKeyPairSync } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@a2a-js/sdk/client';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';
import { createKeySigner, didKeyOf, mintCallerToken, type Signer } from '../../src/acmp/identity/index.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { acmpHost, newTaskId, V1 } from '../acmp/helpers.js';
import { shared } from '../helpers/cleanup.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { cleanup, onCleanup, postJson, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const STATIC = 'static=static-secret-0123456789';
const STATIC_SECRET = 'static-secret-0123456789';
const FLAGS = { token: [STATIC], 'accept-did-callers': true, 'grpc-port': '0' };
const getTask = { jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'missing' } };
/** What the host answers a wrong bearer token with today, on JSON-RPC. */
const INVALID = { jsonrpc: '2.0', error: { code: -31401, message: 'Invalid bearer token' } };

function didKeySigner(): Signer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return createKeySigner(didKeyOf(publicKey), privateKey);
}

const invokeOf = (taskId: string) => ({
  task_id: taskId,
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Fine.' },
  max_price_cu: 0.005,
});

async function listedTaskIds(client: Client): Promise<string[]> {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: 0,
    pageSize: 100,
    pageToken: '',
    historyLength: 0,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.tasks.map((t) => t.id);
}

/** A JSON-RPC GetTask with `Authorization: Bearer <token>`. */
const getTaskWith = (url: string, token: string) =>
  postJson(`${url}/a2a/jsonrpc`, getTask, { ...V1, authorization: `Bearer ${token}` });

describe('callers identified by DID (docs/acmp-identity.md "Callers identified by DID")', () => {
  // Tests that only read and refuse share one host; each uses DIDs of its own.
  const host = shared(() => acmpHost({ flags: FLAGS, transport: 'grpc' }));

  it('the card offers the did-jwt scheme as an alternative to bearer', async () => {
    const res = await fetch(`${host().url}/.well-known/agent-card.json`, { headers: V1 });
    const card = (await res.json()) as Record<string, unknown>;
    expect(card.securitySchemes).toMatchObject({
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } },
      'did-jwt': { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: {} } }, { schemes: { 'did-jwt': {} } }]);
  });

  it('a buyer never given a token invokes with only a did:key signer; its tasks are its DID’s alone', async () => {
    const alice = didKeySigner();
    const bob = didKeySigner();
    const taskId = newTaskId();
    const buyer = await createAcmpBuyer({ agentUrl: host().url, signer: alice, retries: 0 });
    expect(await buyer.invoke(invokeOf(taskId))).toMatchObject({ task_id: taskId });
    const card = await fetchAgentCard(host().url);
    const asAlice = await createA2AClient(card, { signer: alice });
    const asBob = await createA2AClient(card, { signer: bob });
    expect(await listedTaskIds(asAlice)).toContain(taskId);
    expect(await listedTaskIds(asBob)).not.toContain(taskId);
    await expect(asBob.getTask({ tenant: '', id: taskId, historyLength: 0 })).rejects.toThrow();
  });

  it('records the DID as the owner in the store', async () => {
    const alice = didKeySigner();
    const taskId = newTaskId();
    await (await createAcmpBuyer({ agentUrl: host().url, signer: alice })).invoke(invokeOf(taskId));
    const rows = await host()
      .database!.db.selectFrom('acmp_tasks' as never)
      .select(['agent' as never])
      .where('task_id' as never, '=', taskId as never)
      .execute();
    expect(rows).toEqual([{ agent: alice.did }]);
  });

  it('static tokens keep working next to DID callers', async () => {
    const res = await getTaskWith(host().url, STATIC_SECRET);
    expect(res.body).toMatchObject({ error: { code: -32001 } });
  });

  it('refuses a request without credentials as before', async () => {
    const res = await postJson(`${host().url}/a2a/jsonrpc`, getTask, V1);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: -31401, message: 'Bearer token required' } });
  });

  it('refuses a replayed token (same jti) with 401', async () => {
    const token = await mintCallerToken(didKeySigner(), { audience: host().url });
    expect((await getTaskWith(host().url, token)).status).toBe(200);
    const again = await getTaskWith(host().url, token);
    expect(again.status).toBe(401);
    expect(again.body).toMatchObject(INVALID);
  });

  it('refuses an expired token with 401', async () => {
    const clock = { now: () => Date.now() - 10 * 60_000 };
    const token = await mintCallerToken(didKeySigner(), { audience: host().url, clock });
    const res = await getTaskWith(host().url, token);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject(INVALID);
  });

  it('refuses a token for another audience with 401', async () => {
    const token = await mintCallerToken(didKeySigner(), { audience: 'https://elsewhere.example' });
    const res = await getTaskWith(host().url, token);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject(INVALID);
  });

  it('refuses a token signed by a key not in the DID document with 401', async () => {
    const victim = didKeySigner();
    const forged = createKeySigner(
      { did: victim.did, verificationMethod: victim.verificationMethod },
      generateKeyPairSync('ed25519').privateKey,
    );
    const token = await mintCallerToken(forged, { audience: host().url });
    const res = await getTaskWith(host().url, token);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject(INVALID);
  });

  it('accepts the agent card URL as audience, on REST too', async () => {
    const token = await mintCallerToken(didKeySigner(), {
      audience: `${host().url}/.well-known/agent-card.json`,
    });
    const res = await fetch(`${host().url}/a2a/rest/tasks/missing`, {
      headers: { ...V1, authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(404);
  });

  it('gRPC accepts DID tokens in the authorization metadata, and a token spent over HTTP stays spent', async () => {
    const alice = didKeySigner();
    const taskId = newTaskId();
    const card = await fetchAgentCard(host().url);
    const buyer = await createAcmpBuyer({ card, signer: alice, transport: 'GRPC', retries: 0 });
    expect(await buyer.invoke(invokeOf(taskId))).toMatchObject({ task_id: taskId });
    const spent = await mintCallerToken(alice, { audience: host().url });
    expect((await getTaskWith(host().url, spent)).status).toBe(200);
    const replay = await createA2AClient(card, { token: spent, transport: 'GRPC' });
    await expect(replay.getTask({ tenant: '', id: taskId, historyLength: 0 })).rejects.toMatchObject({
      status: grpc.status.UNAUTHENTICATED,
      message: expect.stringContaining('Invalid bearer token') as unknown,
    });
  });

  it('/mcp accepts DID callers, scoped by the same DID as over A2A', async () => {
    const alice = didKeySigner();
    const taskId = newTaskId();
    const mcp = await connectMcpAcmpBuyer({
      endpoint: { url: `${host().url}/mcp` },
      signer: alice,
      retries: 0,
    });
    onCleanup(() => mcp.close());
    expect(await mcp.invoke(invokeOf(taskId))).toMatchObject({ task_id: taskId });
    const asAlice = await createA2AClient(await fetchAgentCard(host().url), { signer: alice });
    expect(await listedTaskIds(asAlice)).toContain(taskId);
  });

  it('a host without --accept-did-callers refuses DID tokens and lists no did-jwt scheme', async () => {
    const plain = await startTestHost({ flags: { token: [STATIC] } });
    const token = await mintCallerToken(didKeySigner(), { audience: plain.url });
    const res = await getTaskWith(plain.url, token);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject(INVALID);
    expect((await fetchAgentCard(plain.url)).securitySchemes).not.toHaveProperty('did-jwt');
  });

  it('a host with DID callers and no tokens answers an SDK client sending plain messages', async () => {
    const open = await startTestHost({ flags: { 'accept-did-callers': true } });
    const client = await createA2AClient(await fetchAgentCard(open.url), { signer: didKeySigner() });
    const result = await client.sendMessage({
      tenant: '',
      message: encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart('hello')] }),
      configuration: undefined,
      metadata: undefined,
    });
    expect(result).toBeDefined();
    expect((await postJson(`${open.url}/a2a/jsonrpc`, getTask, V1)).status).toBe(401);
  });
});

const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');

/** GetTask over gRPC with `token`: the status code it ends with (gRPC OK = 0). */
function grpcGetTask(target: string, token: string): Promise<number> {
  const client = new RawA2A(target, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  metadata.set('authorization', `Bearer ${token}`);
  const call = (client as unknown as Record<string, Unary>).getTask!.bind(client);
  return new Promise((resolve) =>
    call({ tenant: '', id: 'missing' }, metadata, (error) => {
      client.close();
      resolve(error?.code ?? grpc.status.OK);
    }),
  );
}

type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null) => void,
) => void;

describe.skipIf(!process.env.TEST_PG_URL)('DID caller tokens across hosts on one PostgreSQL', () => {
  it('a token spent on one host behind a load balancer is refused by the other', async () => {
    // Both hosts answer to one public URL (as behind a load balancer); gRPC gives each a reachable port.
    const db = await freshPgDatabase();
    const flags = { db, 'accept-did-callers': true, 'public-url': 'http://127.0.0.1', 'grpc-port': '0' };
    const a = await startTestHost({ flags, migrate: true });
    const b = await startTestHost({ flags });
    const token = await mintCallerToken(didKeySigner(), { audience: 'http://127.0.0.1' });
    expect(await grpcGetTask(a.grpcUrl!, token)).toBe(grpc.status.NOT_FOUND);
    expect(await grpcGetTask(b.grpcUrl!, token)).toBe(grpc.status.UNAUTHENTICATED);
    const fresh = await mintCallerToken(didKeySigner(), { audience: 'http://127.0.0.1' });
    expect(await grpcGetTask(b.grpcUrl!, fresh)).toBe(grpc.status.NOT_FOUND);
  });
});
