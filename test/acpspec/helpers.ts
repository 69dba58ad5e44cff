import type { Kind } from '../../src/acpspec/constants.js';
import { ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import type { InboundMessage } from '../../src/a2a/part-codec.js';
import { createAcpHttpClient, type AcpHttpClient } from '../../src/http/acp-client.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import type { HostConfig, HostFlags } from '../../src/server/config.js';
import type { RunningHost } from '../../src/server/host.js';
import type { HostModule } from '../../src/server/module.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import type { Clock } from '../../src/shared/clock.js';
import type { IdSource } from '../../src/shared/ids.js';
import {
  newEnvelopeId,
  type AcpState,
  type DeltaEnvelope,
  type PatchOperation,
  type SnapshotEnvelope,
} from '../../src/acpspec/envelope.js';
import { delta, RECEIVER_AGENT_ID, snapshot } from '../helpers/acp-builders.js';
import { startTestHost, tempDir } from '../helpers/host.js';
import { grpcSend, type A2ATransport } from '../helpers/transports.js';

/** The receiver's producer on every test host. */
export const RECEIVER = { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' } as const;

export interface AcpHostOptions {
  /** Default: self-signed TLS, so personal data is allowed. */
  flags?: HostFlags;
  accepts?: Kind[];
  emits?: Kind[];
  clock?: Clock;
  stateIds?: IdSource;
  dataDir?: string;
  migrate?: boolean;
}

/** A running host with the ACPspec module only, plus what the tests look at. */
export interface AcpTestHost extends RunningHost {
  config: HostConfig;
  caCert: string | undefined;
  /** Every A2A message the ACPspec binding was handed (one per round trip). */
  a2aCalls: InboundMessage[];
  /** The HTTPS binding client for this host. */
  http: AcpHttpClient;
  /** A fetch trusting the host's certificate. */
  fetch: typeof fetch;
}

/**
 * Wraps a module so that every message its binding handles is recorded. Module and parts are delegated to,
 * not spread: their methods live on class prototypes, which a spread does not copy.
 */
function counting(module: HostModule, calls: InboundMessage[]): HostModule {
  return {
    name: module.name,
    migrations: module.migrations,
    ownerColumns: module.ownerColumns,
    check: (context) => module.check?.(context),
    async start(context) {
      const parts = await module.start(context);
      const binding = parts.binding!;
      return {
        mountHttp: (app, guards) => parts.mountHttp?.(app, guards),
        close: async () => parts.close?.(),
        binding: {
          ...binding,
          get extension() {
            return binding.extension;
          },
          claims: (message) => binding.claims(message),
          sendMessage: (call) => {
            calls.push(call.message);
            return binding.sendMessage(call);
          },
          sendMessageStream: (call) => {
            calls.push(call.message);
            return binding.sendMessageStream(call);
          },
        },
      };
    },
  };
}

/**
 * Starts a real host on 127.0.0.1:0 with the ACPspec module (self-signed TLS unless told otherwise); it is
 * closed by the shared `cleanup()` of test/helpers/host.ts.
 */
export async function startAcpHost(options: AcpHostOptions = {}): Promise<AcpTestHost> {
  const a2aCalls: InboundMessage[] = [];
  const module = acpModule({
    producer: { ...RECEIVER },
    ...(options.accepts ? { accepts: options.accepts } : {}),
    ...(options.emits ? { emits: options.emits } : {}),
    ...(options.stateIds ? { stateIds: options.stateIds } : {}),
  });
  const host = await startTestHost({
    // Self-signed TLS unless the test chooses (ACPspec carries personal data); never the helper's no-TLS default.
    flags: { 'no-tls': false, ...(options.flags ?? { 'tls-self-signed': true }) },
    dataDir: options.dataDir ?? tempDir('a2ac-acp-'),
    modules: [counting(module, a2aCalls)],
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.migrate ? { migrate: true } : {}),
  });
  const caCert = host.tls?.cert;
  return {
    ...host,
    caCert,
    a2aCalls,
    http: createAcpHttpClient({ baseUrl: host.url, ...(caCert ? { caCert } : {}) }),
    fetch: fetchTrusting(caCert),
  };
}

/** A v1.0 ProtoJSON data part with the ACPspec media type. */
export function dataPart(data: unknown, mediaType = ACP_MEDIA_TYPE): Record<string, unknown> {
  return { data, mediaType };
}

/** A v1.0 ProtoJSON user message. */
export function userMessage(parts: unknown[], metadata?: Record<string, unknown>): Record<string, unknown> {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts, ...(metadata ? { metadata } : {}) };
}

/** The JSON-RPC answer of a raw call. */
export interface RpcAnswer {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

/**
 * A raw JSON-RPC call to the host. `version` '1.0' sends `A2A-Version: 1.0`; '0.3' sends no version header
 * (what a v0.3 client does), so method names are the v0.3 ones (`message/send`).
 */
export async function rpc(
  host: AcpTestHost,
  method: string,
  params: unknown,
  version: '1.0' | '0.3' = '1.0',
): Promise<RpcAnswer> {
  const res = await host.fetch(`${host.url}/a2a/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as RpcAnswer['body'] };
}

/**
 * Sends one message over raw JSON-RPC v1.0 (or, with `transport: 'grpc'`, the SDK's gRPC client; the host
 * must serve gRPC) and returns the data of the reply's single part.
 */
export async function sendRaw(
  host: AcpTestHost,
  message: Record<string, unknown>,
  transport: A2ATransport = 'jsonrpc',
): Promise<Record<string, unknown>> {
  const body =
    transport === 'grpc'
      ? await grpcSend({ ...host, transport }, message)
      : (await rpc(host, 'SendMessage', { message })).body;
  if (body.error) throw new Error(`${transport} error ${body.error.code}: ${body.error.message}`);
  return replyData(body.result?.['message']);
}

/** The data of the single data part of a reply message (v1.0 or v0.3 spelling). */
export function replyData(message: unknown): Record<string, unknown> {
  const parts = (message as { parts?: { data?: unknown }[] } | undefined)?.parts ?? [];
  if (parts.length !== 1) throw new Error(`expected one part in the reply, got ${parts.length}`);
  return parts[0]!.data as Record<string, unknown>;
}

/** The code of an `{acp_error}` reply, or undefined. */
export function errorCode(reply: Record<string, unknown>): string | undefined {
  return (reply['acp_error'] as { code?: string } | undefined)?.code;
}

/** POSTs raw bytes to the HTTPS envelope route. */
export async function postEnvelope(
  host: AcpTestHost,
  body: string | Buffer,
): Promise<{ status: number; body: Record<string, unknown>; raw: Buffer }> {
  const res = await host.fetch(`${host.url}/acp/v0.1/envelopes`, {
    method: 'POST',
    headers: { 'content-type': ACP_MEDIA_TYPE },
    body,
  });
  const raw = Buffer.from(await res.arrayBuffer());
  return { status: res.status, body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>, raw };
}

/** The code of a rejected promise (AcpError/LocalError), or the value when it did not reject. */
export async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    return await promise;
  } catch (error) {
    return (error as { code?: unknown }).code ?? error;
  }
}

/** A lead snapshot (personal data, evidenced consent) for a transaction, with a fresh envelope id. */
export function freshSnapshot(transactionId: string, state?: AcpState): SnapshotEnvelope {
  return snapshot({
    transaction_id: transactionId,
    envelope_id: newEnvelopeId(),
    ...(state ? { state } : {}),
  });
}

/** A delta on `parent` with a fresh envelope id. */
export function freshDelta(
  parent: { envelope_id: string; transaction_id: string },
  patch: PatchOperation[],
): DeltaEnvelope {
  return delta(parent, patch, { envelope_id: newEnvelopeId() });
}

/** A unique transaction id for one test. */
export function txId(label: string): string {
  return `tx-${label}-${crypto.randomUUID().slice(0, 8)}`;
}
