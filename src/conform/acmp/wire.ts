import { ACMP_EXTENSION_URI } from '../../acmp/constants.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext } from '../check.js';

/**
 * Raw A2A v1.0 JSON-RPC for the ACMP checks (docs/conformance.md "ACMP checks"): the kit must see the
 * bytes the agent sent — media types, root keys, metadata, SSE framing — so it reads the wire itself
 * instead of the SDK client, which normalises all of them.
 */

/** One JSON-RPC response as received, with the time it arrived (ms since the call started). */
export interface WireFrame {
  readonly atMs: number;
  readonly body: Record<string, unknown>;
}

/** What one call returned: its frames (one for SendMessage, one per SSE event for streams). */
export interface WireExchange {
  readonly status: number;
  readonly contentType: string;
  readonly frames: readonly WireFrame[];
}

/** The URL of the card's A2A v1.0 JSON-RPC interface, if it lists one. */
export function jsonRpcEndpoint(card: unknown): string | undefined {
  const interfaces =
    isJsonObject(card) && Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  for (const i of interfaces) {
    if (!isJsonObject(i) || i.protocolBinding !== 'JSONRPC' || typeof i.url !== 'string') continue;
    if (typeof i.protocolVersion === 'string' && i.protocolVersion.startsWith('0.')) continue;
    return i.url;
  }
  return undefined;
}

/** Request headers: A2A v1.0, the ACMP extension activated (A2A §4.6, seed 000 §2), the operator's token. */
function headers(ctx: ConformContext, accept: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept,
    'A2A-Version': '1.0',
    'A2A-Extensions': ACMP_EXTENSION_URI,
    ...(ctx.token ? { authorization: `Bearer ${ctx.token}` } : {}),
  };
}

let rpcIds = 0;

/** A JSON-RPC call expecting one JSON body (SendMessage, GetTask, CancelTask). */
export async function callRpc(
  ctx: ConformContext,
  call: { endpoint: string; method: string; params: unknown },
): Promise<WireExchange> {
  const started = Date.now();
  const response = await (ctx.fetch ?? fetch)(call.endpoint, {
    method: 'POST',
    headers: headers(ctx, 'application/json'),
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcIds, method: call.method, params: call.params }),
    signal: AbortSignal.timeout(ctx.timeoutMs),
  });
  const text = await response.text();
  const body = parseObject(text);
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    frames: body ? [{ atMs: Date.now() - started, body }] : [],
  };
}

/**
 * SendStreamingMessage: reads the SSE stream event by event, timestamping each (liveness is measured on
 * arrival). `onFrame` sees each frame as it arrives (the cancel check sends its cancel from there). The
 * stream may be idle at most `ctx.timeoutMs` between events.
 */
export async function streamRpc(
  ctx: ConformContext,
  call: { endpoint: string; params: unknown; onFrame?: (frame: WireFrame) => void },
): Promise<WireExchange> {
  const started = Date.now();
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), ctx.timeoutMs);
  const frames: WireFrame[] = [];
  try {
    const response = await (ctx.fetch ?? fetch)(call.endpoint, {
      method: 'POST',
      headers: headers(ctx, 'text/event-stream'),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcIds,
        method: 'SendStreamingMessage',
        params: call.params,
      }),
      signal: idle.signal,
    });
    const contentType = response.headers.get('content-type') ?? '';
    if (!response.body) return { status: response.status, contentType, frames };
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
      clearTimeout(timer);
      timer = setTimeout(() => idle.abort(), ctx.timeoutMs);
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
        const body = parseObject(sseData(event));
        if (!body) continue;
        const frame = { atMs: Date.now() - started, body };
        frames.push(frame);
        call.onFrame?.(frame);
      }
    }
    const tail = parseObject(sseData(buffer));
    if (tail) frames.push({ atMs: Date.now() - started, body: tail });
    return { status: response.status, contentType, frames };
  } finally {
    clearTimeout(timer);
  }
}

/** The `data:` lines of one SSE event, joined (comments and other fields ignored). */
function sseData(event: string): string {
  return event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
