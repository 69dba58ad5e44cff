import { ACP_HTTP_ROUTES, ACP_MEDIA_TYPE, ACP_PART_KEYS } from '../acpspec/constants.js';
import type { AcpAck, AcpEvent, Envelope, SnapshotEnvelope } from '../acpspec/envelope.js';
import { parseAck, parseEvent, parseEventPage, parseStateAnswer } from '../acpspec/replies.js';
import { AcpError, fromAcpErrorObject } from '../acpspec/errors.js';
import type { AcpSenderTransport } from '../acpspec/sender.js';
import { fetchTrusting } from '../shared/fetch.js';
import { isJsonObject } from '../shared/json.js';

/** How to reach a receiver's HTTPS binding. */
export interface AcpHttpOptions {
  /** The receiver's base URL (`https://host:port`), without the `/acp/v0.1` prefix. */
  baseUrl: string;
  /** Bearer token for the envelope and transaction routes. */
  token?: string;
  /** Extra trusted CA certificate (PEM), e.g. a host's self-signed localhost certificate. */
  caCert?: string;
}

/** A page of the event stream as the receiver numbers it. */
export interface AcpEventPage {
  events: AcpEvent[];
  /** The cursor for the next page (`after`), present when the page was full. */
  next?: number;
}

/** An event followed over Server-Sent Events, with its stream position. */
export type SequencedAcpEvent = AcpEvent & { seq: number };

/** The client side of the HTTPS binding (docs/acpspec-binding.md "HTTPS binding"). */
export interface AcpHttpClient {
  /** The sender core's transport: `POST /envelopes` with exactly the canonical bytes. */
  readonly transport: AcpSenderTransport;
  /** `GET …/state`: the snapshot and the exact bytes the receiver sent. @throws AcpError from the peer. */
  state(
    transactionId: string,
    options?: { signal?: AbortSignal },
  ): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }>;
  /** `GET …/events?after=&limit=`: one page. @throws AcpError from the peer. */
  events(
    transactionId: string,
    page?: { after?: number; limit?: number },
    options?: { signal?: AbortSignal },
  ): Promise<AcpEventPage>;
  /**
   * `GET …/events` with `Accept: text/event-stream`: yields events as they are appended until `signal`
   * aborts (then it ends quietly) or the receiver closes the stream. @throws AcpError from the peer.
   */
  follow(
    transactionId: string,
    options: { after?: number; signal: AbortSignal },
  ): AsyncGenerator<SequencedAcpEvent, void, undefined>;
}

/**
 * Creates the HTTPS binding client. Requests carry the envelope's canonical (RFC 8785) bytes, so the
 * bytes on the wire are the ones the A2A data part canonicalises to (seed "The Conformance Rule").
 * Personal data is only sent when the URL is `https:` (the sender core checks `transport.secure`).
 */
export function createAcpHttpClient(options: AcpHttpOptions): AcpHttpClient {
  return new FetchAcpHttpClient(options);
}

/** {@link AcpHttpClient} over `fetch` (trusting the extra CA certificate when one is given). */
class FetchAcpHttpClient implements AcpHttpClient {
  readonly transport: AcpSenderTransport;
  private readonly base: string;
  private readonly doFetch: typeof fetch;
  private readonly auth: Record<string, string>;

  constructor(options: AcpHttpOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.doFetch = fetchTrusting(options.caCert);
    this.auth = options.token ? { authorization: `Bearer ${options.token}` } : {};
    this.transport = {
      secure: this.base.startsWith('https://'),
      send: (_envelope: Envelope, bytes: Buffer) => this.sendEnvelope(bytes),
      requestState: async (transactionId: string) => {
        const { body } = await this.request(ACP_HTTP_ROUTES.state(transactionId), {
          headers: { accept: ACP_MEDIA_TYPE },
        });
        return parseBody(body);
      },
    };
  }

  async state(
    transactionId: string,
    options?: { signal?: AbortSignal },
  ): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }> {
    const { body } = await this.request(ACP_HTTP_ROUTES.state(transactionId), {
      headers: { accept: ACP_MEDIA_TYPE },
      signal: options?.signal ?? null,
    });
    return { envelope: parseStateAnswer(parseBody(body), transactionId), bytes: body };
  }

  async events(
    transactionId: string,
    page?: { after?: number; limit?: number },
    options?: { signal?: AbortSignal },
  ): Promise<AcpEventPage> {
    const query = new URLSearchParams();
    if (page?.after !== undefined) query.set('after', String(page.after));
    if (page?.limit !== undefined) query.set('limit', String(page.limit));
    const suffix = query.toString() === '' ? '' : `?${query.toString()}`;
    const { body } = await this.request(ACP_HTTP_ROUTES.events(transactionId) + suffix, {
      headers: { accept: 'application/json' },
      signal: options?.signal ?? null,
    });
    return parseEventPage(parseBody(body));
  }

  async *follow(
    transactionId: string,
    options: { after?: number; signal: AbortSignal },
  ): AsyncGenerator<SequencedAcpEvent, void, undefined> {
    const { signal } = options;
    const query = options.after ? `?after=${options.after}` : '';
    const url = this.base + ACP_HTTP_ROUTES.events(transactionId) + query;
    let res: Response;
    try {
      res = await this.doFetch(url, { headers: { ...this.auth, accept: 'text/event-stream' }, signal });
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    if (!res.ok) throw errorFrom(res.status, Buffer.from(await res.arrayBuffer()));
    if (!res.body) return;
    yield* sseEvents(res.body, signal);
  }

  /** `POST /envelopes` with exactly the canonical bytes; the answer's `acp_ack`. */
  private async sendEnvelope(bytes: Buffer): Promise<AcpAck> {
    const { body } = await this.request(ACP_HTTP_ROUTES.envelopes, {
      method: 'POST',
      headers: { 'content-type': ACP_MEDIA_TYPE, accept: ACP_MEDIA_TYPE },
      body: bytes,
    });
    const ack = parseBody(body)[ACP_PART_KEYS.ack];
    if (ack === undefined)
      throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered without an acp_ack');
    return parseAck(ack);
  }

  /** One request with the bearer token; an answer that is not 2xx becomes the peer's error. */
  private async request(path: string, init: RequestInit): Promise<{ res: Response; body: Buffer }> {
    const res = await this.doFetch(this.base + path, {
      ...init,
      headers: { ...this.auth, ...(init.headers as Record<string, string>) },
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (!res.ok) throw errorFrom(res.status, body);
    return { res, body };
  }
}

/** The events of an SSE body until it ends or `signal` aborts (then quietly); the reader is cancelled after. */
async function* sseEvents(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<SequencedAcpEvent, void, undefined> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const chunk = await reader.read().catch((error: unknown) => {
        if (signal.aborted) return { done: true as const, value: undefined };
        throw error;
      });
      if (chunk.done) return;
      buffer += chunk.value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = parseSseEvent(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (signal.aborted) return;
        if (event) yield event;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** One SSE event block (`id:` = seq, `data:` = the event's canonical JSON); comments and other fields are skipped. */
function parseSseEvent(block: string): SequencedAcpEvent | undefined {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = line.slice(3).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (id === undefined || data.length === 0) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join('\n'));
  } catch {
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver sent an event that is not JSON');
  }
  const seq = Number(id);
  if (!Number.isSafeInteger(seq))
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver sent an event without a sequence number');
  return { ...parseEvent(parsed), seq };
}

function parseBody(body: Buffer): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered with a body that is not JSON');
  }
  if (!isJsonObject(parsed))
    throw new AcpError(
      'ACP_MESSAGE_NONCONFORMANT',
      'the receiver answered with a body that is not a JSON object',
    );
  return parsed;
}

/**
 * An HTTP answer from outside the binding (no `acp_error` body): authentication, a proxy, a wrong URL. It is
 * a transport failure, not an ACPspec code, so it stays apart from {@link AcpError}.
 */
export class AcpHttpStatusError extends Error {
  override readonly name = 'AcpHttpStatusError';
  constructor(
    readonly status: number,
    detail: string | undefined,
  ) {
    super(`the receiver answered HTTP ${status}${detail ? `: ${detail}` : ' without an acp_error'}`);
  }
}

/** The peer's `acp_error`, or an {@link AcpHttpStatusError} naming the status (and a google.rpc.Status message). */
function errorFrom(status: number, body: Buffer): Error {
  let detail: string | undefined;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    const error = isJsonObject(parsed) ? parsed[ACP_PART_KEYS.error] : undefined;
    if (isJsonObject(error)) return fromAcpErrorObject(error);
    const rpcStatus =
      isJsonObject(parsed) && isJsonObject(parsed['error']) ? parsed['error']['message'] : undefined;
    if (typeof rpcStatus === 'string') detail = rpcStatus.slice(0, 200);
  } catch {
    // not JSON: reported by status alone
  }
  return new AcpHttpStatusError(status, detail);
}
