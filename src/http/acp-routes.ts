import { once } from 'node:events';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ACP_HTTP_PREFIX, ACP_MEDIA_TYPE, ACP_PART_KEYS, ACP_SCHEMA_PATH } from '../acpspec/constants.js';
import { ACP_ERRORS, AcpError, toAcpErrorObject } from '../acpspec/errors.js';
import type { AcpReceiver } from '../acpspec/receiver.js';
import { ACP_SCHEMA_TEXT } from '../acpspec/schema.js';
import { canonicalJson } from '../shared/jcs.js';
import { checkJsonBytes } from '../shared/json-edge.js';
import { isJsonObject } from '../shared/json.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { TRACE_ATTR, failActiveSpan, startServerSpan, withSpan } from '../shared/tracing.js';

export interface AcpRoutesOptions {
  receiver: AcpReceiver;
  /** Whether the host's interface is TLS. */
  secure: boolean;
  /** Bearer authentication for the envelope and transaction routes (the schema stays public). */
  auth: RequestHandler;
  /** The identity of a request's caller (`anonymous` without tokens): transactions belong to their creator. */
  callerOf: (req: Request) => string;
  bodyLimitBytes: number;
  /** Interval of the SSE keep-alive comment while following; default 15 s. */
  sseKeepaliveMs?: number;
  logger?: Logger;
}

const MAX_FOLLOW_MS = 30 * 60 * 1000;
const SSE_KEEPALIVE_MS = 15_000;

/**
 * ACPspec over plain HTTPS (docs/acpspec-binding.md "HTTPS binding"). Every body we send is canonical (RFC 8785) bytes, so
 * the same envelope is byte-identical here and in the A2A data part (seed "The Conformance Rule"):
 * - `POST /acp/v0.1/envelopes` → `{"acp_ack": …}` with 200 (a new envelope and an idempotent replay alike:
 *   the ack is the same) or `{"acp_error": …}` with the error table's HTTP status (a body over the limit is
 *   `ACP_PAYLOAD_TOO_LARGE`, 413);
 * - `GET /acp/v0.1/transactions/{id}/state` → the state snapshot's bytes;
 * - `GET /acp/v0.1/transactions/{id}/events?after=&limit=` → a page, or `text/event-stream` to follow;
 * - `GET /acp/schemas/0.1/envelope.schema.json` → the schema (public).
 */
export function mountAcpRoutes(app: express.Express, options: AcpRoutesOptions): void {
  const routes = new AcpRoutes(options);
  app.get(ACP_SCHEMA_PATH, (_req, res) => {
    res.type('application/schema+json').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(ACP_SCHEMA_TEXT);
  });
  const router = express.Router();
  router.use(options.auth);
  router.post('/envelopes', (req: Request, res: Response, next: NextFunction) =>
    routes.postEnvelope(req, res, next),
  );
  router.get('/transactions/:id/state', (req: Request, res: Response) => routes.getState(req, res));
  router.get('/transactions/:id/events', (req: Request, res: Response) => routes.getEvents(req, res));
  // Errors Express raises about the request itself (a path segment that is not valid percent-encoding, an
  // authentication refusal) leave the router through its callback: answered here like any other refusal.
  app.use(ACP_HTTP_PREFIX, (req: Request, res: Response, next: NextFunction) =>
    router(req, res, (error?: unknown) => (error ? routes.fail(res, requestError(error)) : next())),
  );
}

/** The span of an envelope POST: method and route (OpenTelemetry HTTP server span names). */
const INGEST_SPAN = `POST ${ACP_HTTP_PREFIX}/envelopes`;

/** The handlers of the HTTPS binding, each route a method. */
class AcpRoutes {
  private readonly logger: Logger;
  private readonly readBody: RequestHandler;

  constructor(private readonly options: AcpRoutesOptions) {
    this.logger = options.logger ?? silentLogger;
    this.readBody = express.raw({ type: () => true, limit: options.bodyLimitBytes });
  }

  /**
   * `POST /envelopes`: the body read as raw bytes (its errors answered as refusals), then ingested; anything
   * the ingest step lets escape goes to the router's `next`, as an async handler's rejection would.
   */
  postEnvelope(req: Request, res: Response, next: NextFunction): void {
    void this.readBody(req, res, (error?: unknown) => {
      if (error) this.fail(res, requestError(error));
      else this.ingest(req, res).catch(next);
    });
  }

  /** Answers with the error object of `error` and its HTTP status (the cause of an internal one is logged). */
  fail(res: Response, error: unknown, envelopeId?: string): void {
    const object = toAcpErrorObject(error, envelopeId ? { envelope_id: envelopeId } : undefined);
    if (object.code === 'ACP_INTERNAL') this.logger.error('acp.http.internal_error', errorFields(error));
    failActiveSpan({ [TRACE_ATTR.acpErrorCode]: object.code });
    sendCanonical(res, ACP_ERRORS[object.code].httpStatus, { [ACP_PART_KEYS.error]: object });
  }

  /**
   * The ingest of one POST inside its SERVER span (docs/operations.md "Tracing"), continuing the trace
   * the sender's `traceparent` carries: the receiver's commit span descends from it.
   */
  private async ingest(req: Request, res: Response): Promise<void> {
    const span = startServerSpan(INGEST_SPAN, req.headers, {
      'http.request.method': 'POST',
      'http.route': `${ACP_HTTP_PREFIX}/envelopes`,
    });
    try {
      await withSpan(span, () => this.ingestBody(req, res));
    } finally {
      span.end();
    }
  }

  private async ingestBody(req: Request, res: Response): Promise<void> {
    // The shared edge (docs/host.md "Bad input"): UTF-8, JSON, and values JSON carries exactly.
    const check = checkJsonBytes(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
    if (!check.ok || check.value === undefined) {
      const outOfProfile = !check.ok && check.problem !== 'utf8' && check.problem !== 'syntax';
      const message = outOfProfile ? "a JSON value is outside the receiver's limits" : 'body is not JSON';
      const details = check.ok ? undefined : { details: { rule: check.problem } };
      this.fail(res, new AcpError('ACP_SCHEMA_INVALID', message, details));
      return;
    }
    const envelope: unknown = check.value;
    const envelopeId = isJsonObject(envelope) ? envelope.envelope_id : undefined;
    try {
      const before = Date.now();
      const ack = await this.options.receiver.ingest(envelope, {
        secure: this.options.secure,
        caller: this.options.callerOf(req),
      });
      this.logger.debug('acp.http.ingested', { transaction_id: ack.transaction_id, ms: Date.now() - before });
      sendCanonical(res, 200, { [ACP_PART_KEYS.ack]: ack });
    } catch (error) {
      this.fail(res, error, typeof envelopeId === 'string' ? envelopeId : undefined);
    }
  }

  /** `GET /transactions/{id}/state`: the state snapshot's bytes. */
  async getState(req: Request, res: Response): Promise<void> {
    try {
      const { bytes } = await this.options.receiver.state(String(req.params.id), {
        caller: this.options.callerOf(req),
      });
      res.status(200).type(ACP_MEDIA_TYPE).send(bytes);
    } catch (error) {
      this.fail(res, error);
    }
  }

  /** `GET /transactions/{id}/events`: a page, or the stream followed when the client accepts SSE. */
  async getEvents(req: Request, res: Response): Promise<void> {
    const id = String(req.params.id);
    const lastEventId = req.get('last-event-id');
    const after = Number(req.query.after ?? lastEventId ?? 0);
    const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
    if (
      !Number.isSafeInteger(after) ||
      after < 0 ||
      (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    ) {
      this.fail(res, new AcpError('ACP_SCHEMA_INVALID', 'after and limit must be non-negative integers'));
      return;
    }
    try {
      if (req.accepts(['application/json', 'text/event-stream']) === 'text/event-stream') {
        await this.follow(res, { id, after, caller: this.options.callerOf(req) });
        return;
      }
      const page = await this.options.receiver.events(id, {
        after,
        limit,
        caller: this.options.callerOf(req),
      });
      sendCanonical(res, 200, page);
    } catch (error) {
      if (res.headersSent) res.end();
      else this.fail(res, error);
    }
  }

  /**
   * Follows the event stream as Server-Sent Events until the client goes away (bounded in time). An unknown
   * transaction is answered with an error object first; after that the headers go out at once, so a
   * follower of a quiet transaction is not left waiting for a response. `id:` is the event's seq, so a
   * reconnecting client resumes with `Last-Event-ID`. A comment every `sseKeepaliveMs` keeps proxies from
   * closing a quiet stream; when the client reads slower than events arrive, writing waits for `drain`.
   */
  private async follow(
    res: Response,
    { id, after, caller }: { id: string; after: number; caller: string },
  ): Promise<void> {
    const { receiver } = this.options;
    const stop = new AbortController();
    // Registered before the first await: a client that leaves while the transaction is looked up must still
    // stop the follower (the response closes when the client goes away, or when we end it).
    res.on('close', () => stop.abort());
    const timer = setTimeout(() => stop.abort(), MAX_FOLLOW_MS);
    let keepalive: NodeJS.Timeout | undefined;
    try {
      await receiver.events(id, { after, limit: 1, caller });
      if (stop.signal.aborted) return;
      res.status(200).setHeader('Content-Type', 'text/event-stream');
      res.setHeader('Cache-Control', 'no-cache');
      res.flushHeaders();
      keepalive = setInterval(() => {
        if (!res.writableNeedDrain) res.write(': keepalive\n\n');
      }, this.options.sseKeepaliveMs ?? SSE_KEEPALIVE_MS);
      for await (const { seq, ...event } of receiver.follow(id, { after, signal: stop.signal, caller })) {
        await write(res, `id: ${seq}\nevent: acp.event\ndata: ${canonicalJson(event)}\n\n`, stop.signal);
      }
    } finally {
      clearTimeout(timer);
      clearInterval(keepalive);
      stop.abort();
      if (res.headersSent && !res.writableEnded) res.end();
    }
  }
}

/**
 * Maps an error Express raised about the request — `express.raw`'s (body-parser's `http-errors`, which
 * carry a `type`), or the router's for a path that does not decode — to a coded error, so the request is
 * answered like any other refusal instead of reaching the app's last-resort handler.
 */
function requestError(error: unknown): unknown {
  const type = isJsonObject(error) ? error.type : undefined;
  const status = isJsonObject(error) ? error.status : undefined;
  if (type === 'entity.too.large') return new AcpError('ACP_PAYLOAD_TOO_LARGE');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the request could not be read');
  }
  return error;
}

/** Writes one chunk; when the socket buffer is full, waits for `drain` (or for the follow to stop). */
async function write(res: Response, chunk: string, signal: AbortSignal): Promise<void> {
  if (res.write(chunk)) return;
  try {
    await once(res, 'drain', { signal });
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

/**
 * Writes a canonical JSON body directly: the bytes are final, so Express's `send` (ETag hashing, freshness
 * and charset handling) would only add work to every envelope's answer (docs/acpspec-core.md "Ingest path").
 */
function sendCanonical(res: Response, status: number, body: unknown): void {
  const bytes = Buffer.from(canonicalJson(body), 'utf8');
  res.writeHead(status, { 'Content-Type': ACP_MEDIA_TYPE, 'Content-Length': bytes.length });
  res.end(bytes);
}
