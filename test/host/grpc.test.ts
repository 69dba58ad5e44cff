import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeErrorInfo, decodeStatus } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { describeCard } from '../../src/a2a/card-summary.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { HealthService, SERVING_STATUS } from '../../src/a2a/host/grpc-health.js';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { createPlainTask } from '../helpers/a2a.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { freshSnapshot, RECEIVER, txId } from '../acpspec/helpers.js';

afterEach(cleanup);

const ALICE = 'alice-secret-0123456789abcdef';
const BOB = 'bobby-secret-0123456789abcdef';
const GRPC: HostFlags = { 'grpc-port': '0' };
/** A token no host in this file knows. */
const MALLORY = 'mallory-secret-0123456789abcd';

/** The SDK's v1.0 service definition as a plain grpc-js client: raw requests, raw statuses. */
const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');
const RawHealth = grpc.makeGenericClientConstructor(HealthService, 'Health');

type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response: unknown) => void,
) => void;

/** One unary call on a raw client; resolves with the response or the status it failed with. */
function unary(
  client: grpc.Client,
  method: string,
  request: unknown,
  headers: Record<string, string> = {},
): Promise<{ response?: unknown; error?: grpc.ServiceError }> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries({ 'a2a-version': '1.0', ...headers })) metadata.set(k, v);
  const call = (client as unknown as Record<string, Unary>)[method]!.bind(client);
  return new Promise((resolve) =>
    call(request, metadata, (error, response) => resolve(error ? { error } : { response })),
  );
}

function rawClient(
  grpcUrl: string | undefined,
  credentials = grpc.credentials.createInsecure(),
): grpc.Client {
  const client = new RawA2A(grpcUrl!, credentials);
  return client;
}

/** The ErrorInfo reason and domain in a status's `grpc-status-details-bin`. */
function errorInfo(error: grpc.ServiceError | undefined): { reason: string; domain: string } | undefined {
  const bin = error?.metadata.get('grpc-status-details-bin')[0];
  if (!(bin instanceof Buffer)) return undefined;
  const detail = decodeStatus(bin).details[0];
  return detail ? decodeErrorInfo(detail.value) : undefined;
}

const plainMessage = () =>
  encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart('hello')] });

describe('the gRPC interface on the card (A2A §5.6)', () => {
  // The card tests only read: one gRPC host serves them all.
  const grpcHost = shared(() => startTestHost({ flags: GRPC }));

  it('lists GRPC at 1.0 and 0.3 after JSON-RPC and HTTP+JSON, as the host:port clients dial', async () => {
    const host = grpcHost();
    const card = await fetchAgentCard(host.url);
    expect(card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`)).toEqual([
      'JSONRPC 1.0',
      'HTTP+JSON 1.0',
      'GRPC 1.0',
      'JSONRPC 0.3',
      'HTTP+JSON 0.3',
      'GRPC 0.3',
    ]);
    expect(card.supportedInterfaces.filter((i) => i.protocolBinding === 'GRPC').map((i) => i.url)).toEqual([
      host.grpcUrl,
      host.grpcUrl,
    ]);
    expect(host.grpcUrl).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('passes the card check of `a2a-commerce card` (a gRPC interface is a host:port target)', async () => {
    const host = grpcHost();
    const summary = describeCard(await fetchAgentCard(host.url));
    expect(summary.problems).toEqual([]);
    expect(summary.text).toContain(`GRPC       A2A 1.0  ${host.grpcUrl}`);
  });

  it('is off unless asked for', async () => {
    const host = await startTestHost();
    expect(host.grpcUrl).toBeUndefined();
    expect(
      (await fetchAgentCard(host.url)).supportedInterfaces.some((i) => i.protocolBinding === 'GRPC'),
    ).toBe(false);
  });
});

describe('bearer authentication over gRPC metadata (ACMP Layer 1 §5.1, A2A §7.4)', () => {
  // One host knowing alice and bob; each test makes its own tasks, so they do not interfere.
  const authHost = shared(() =>
    startTestHost({ flags: { ...GRPC, token: [`alice=${ALICE}`, `bob=${BOB}`] } }),
  );

  it('refuses a call without a token with UNAUTHENTICATED and an ErrorInfo, before the handler runs', async () => {
    const host = authHost();
    const { error } = await unary(rawClient(host.grpcUrl), 'getTask', { tenant: '', id: 'missing' });
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(error?.details).toBe('Bearer token required');
    expect(errorInfo(error)).toMatchObject({ reason: 'UNAUTHENTICATED', domain: 'a2a-commerce' });
  });

  it('refuses a wrong token with UNAUTHENTICATED, also on streaming calls', async () => {
    const host = authHost();
    const client = await createA2AClient(await fetchAgentCard(host.url), {
      transport: 'GRPC',
      token: MALLORY,
    });
    await expect(
      client.getTask({ tenant: '', id: 'missing', historyLength: undefined }),
    ).rejects.toMatchObject({ status: grpc.status.UNAUTHENTICATED });
    const stream = client.sendMessageStream({
      tenant: '',
      message: plainMessage(),
      configuration: undefined,
      metadata: undefined,
    });
    await expect(stream.next()).rejects.toMatchObject({ status: grpc.status.UNAUTHENTICATED });
  });

  it('gives the caller the identity its token has on HTTP: a task made over gRPC is its own on JSON-RPC', async () => {
    const host = authHost();
    const card = await fetchAgentCard(host.url);
    const taskId = await createPlainTask(await createA2AClient(card, { transport: 'GRPC', token: ALICE }));
    const aliceJsonRpc = await createA2AClient(card, { transport: 'JSONRPC', token: ALICE });
    expect((await aliceJsonRpc.getTask({ tenant: '', id: taskId, historyLength: undefined })).id).toBe(
      taskId,
    );
    const bobGrpc = await createA2AClient(card, { transport: 'GRPC', token: BOB });
    await expect(bobGrpc.getTask({ tenant: '', id: taskId, historyLength: undefined })).rejects.toMatchObject(
      { status: grpc.status.NOT_FOUND },
    );
  });

  it('keeps the health service open to probes without a token', async () => {
    const host = authHost();
    const health = new RawHealth(host.grpcUrl!, grpc.credentials.createInsecure());
    expect(await unary(health, 'check', { service: '' })).toEqual({
      response: { status: SERVING_STATUS.SERVING },
    });
  });
});

describe('A2A errors as gRPC statuses (A2A §10.7 / v1.0.1 error mapping, the SDK table)', () => {
  /** The status of one raw call to a host with the ACMP module (its extension `required` when asked). */
  async function statusOf(
    method: string,
    request: unknown,
    options: { headers?: Record<string, string>; required?: boolean } = {},
  ): Promise<number | undefined> {
    const module = acmpModule({
      capabilities: demoCapabilities({ stepMs: 1 }),
      required: options.required ?? false,
    });
    const host = await startTestHost({ flags: GRPC, modules: [module] });
    return (await unary(rawClient(host.grpcUrl), method, request, options.headers)).error?.code;
  }

  it('TaskNotFound → NOT_FOUND', async () => {
    expect(await statusOf('getTask', { tenant: '', id: 'missing' })).toBe(grpc.status.NOT_FOUND);
  });

  it('a request without its message (RequestMalformed) → INVALID_ARGUMENT', async () => {
    expect(await statusOf('sendMessage', { tenant: '', message: undefined })).toBe(
      grpc.status.INVALID_ARGUMENT,
    );
  });

  it('an unsupported A2A-Version → FAILED_PRECONDITION', async () => {
    expect(await statusOf('getTask', { tenant: '', id: 'x' }, { headers: { 'a2a-version': '9.9' } })).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
  });

  it('a required extension not requested (ExtensionSupportRequired) → FAILED_PRECONDITION', async () => {
    expect(await statusOf('sendMessage', { tenant: '', message: plainMessage() }, { required: true })).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
  });

  it('push registration with push off (PushNotificationNotSupported) → FAILED_PRECONDITION', async () => {
    const config = {
      tenant: '',
      id: '',
      taskId: 'x',
      url: 'https://hooks.example.com/a',
      token: '',
      authentication: undefined,
    };
    expect(await statusOf('createTaskPushNotificationConfig', config)).toBe(grpc.status.FAILED_PRECONDITION);
  });

  it('CancelTask of a finished task (TaskNotCancelable) → FAILED_PRECONDITION', async () => {
    const host = await startTestHost({ flags: GRPC });
    const taskId = await createPlainTask(
      await createA2AClient(await fetchAgentCard(host.url), { transport: 'GRPC' }),
    );
    expect((await unary(rawClient(host.grpcUrl), 'cancelTask', { tenant: '', id: taskId })).error?.code).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
  });

  it('a message over the body limit → RESOURCE_EXHAUSTED, and the server keeps serving', async () => {
    const host = await startTestHost({ flags: { ...GRPC, 'body-limit': '2k' } });
    const big = encodeUserMessage({
      messageId: crypto.randomUUID(),
      parts: [encodeTextPart('x'.repeat(4096))],
    });
    const client = rawClient(host.grpcUrl);
    expect((await unary(client, 'sendMessage', { tenant: '', message: big })).error?.code).toBe(
      grpc.status.RESOURCE_EXHAUSTED,
    );
    expect(
      (await unary(client, 'sendMessage', { tenant: '', message: plainMessage() })).error,
    ).toBeUndefined();
  });

  it('an internal failure → INTERNAL with a generic message, nothing of the cause', async () => {
    const failing = {
      name: 'failing',
      start: () => ({
        binding: {
          id: 'failing',
          extension: { uri: 'urn:test:failing', description: '', required: false, params: undefined },
          skills: [],
          claims: () => true,
          sendMessage: () => Promise.reject(new Error('password=hunter2 at db.internal')),

          sendMessageStream: async function* () {
            await Promise.resolve();
            throw new Error('password=hunter2 at db.internal');
          },
        },
      }),
    };
    const host = await startTestHost({ flags: GRPC, modules: [failing] });
    const { error } = await unary(rawClient(host.grpcUrl), 'sendMessage', {
      tenant: '',
      message: plainMessage(),
    });
    expect(error?.code).toBe(grpc.status.INTERNAL);
    expect(error?.details).toBe('Internal error');
  });
});

describe('v0.3 over gRPC (the SDK compat service)', () => {
  it('serves a v0.3 gRPC client: ACMP invoke and ACPspec ingest', async () => {
    const host = await startTestHost({
      flags: { ...GRPC, 'tls-self-signed': true },
      modules: [
        acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) }),
        acpModule({ producer: { ...RECEIVER } }),
      ],
    });
    const caCert = host.tls!.cert;
    const buyer = await createAcmpBuyer({
      agentUrl: host.url,
      caCert,
      transport: 'GRPC',
      protocolVersion: '0.3',
    });
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'fine' },
      max_price_cu: 1,
      proof_method: 'result-hash',
    });
    expect(result.proof?.hash).toMatch(/^sha256:/);
    const acp = await createAcpClient({
      agentUrl: host.url,
      caCert,
      transport: 'GRPC',
      protocolVersion: '0.3',
    });
    const envelope = freshSnapshot(txId('v03'));
    expect((await acp.send(envelope)).transaction_id).toBe(envelope.transaction_id);
  });
});

describe('TLS', () => {
  it('serves gRPC with the host certificate; a plaintext client gets a transport failure', async () => {
    const host = await startTestHost({ flags: { ...GRPC, 'tls-self-signed': true } });
    const card = await fetchAgentCard(host.url, { caCert: host.tls!.cert });
    expect(
      await createPlainTask(await createA2AClient(card, { transport: 'GRPC', caCert: host.tls!.cert })),
    ).toBeTruthy();
    const plaintext = await createA2AClient(card, { transport: 'GRPC', grpcTls: false });
    const refused = await createPlainTask(plaintext).then(
      () => undefined,
      (error: unknown) => error,
    );
    // Not an A2A error: the ACMP buyer retries it like a failed fetch.
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^gRPC transport failure/);
  });
});
