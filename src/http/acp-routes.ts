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
 * ACPspec over plain HTTPS (design "HTTPS binding"). Every body we send is canonical (RFC 8785) bytes, so
 * the same envelope is byte-identical here and in the A2A data part (seed "The Conformance Rule"):
 * - `POST /acp/v0.1/envelopes` → `{"acp_ack": …}` with 200 (a new envelope and an idempotent replay alike:
 *   the ack is the same) or `{"acp_error": …}` with the error table's HTTP status (a body over the limit is
 *   `ACP_PAYLOAD_TOO_LARGE`, 413);
 * - `GET /acp/v0.1/transactions/{id}/state` → the state snapshot's bytes;
 * - `GET /acp/v0.1/transactions/{id}/events?after=&limit=` → a page, or `text/event-stream` to follow;
 * - `GET /acp/schemas/0.1/envelope.schema.json` → the schema (public).
 */
export function mountAcpRoutes(app: express.Express, options: AcpRoutesOptions): void {
  const logger = options.logger ?? silentLogger;
  const fail = (res: Response, error: unknown, envelopeId?: string): void => {
    const object = toAcpErrorObject(error, envelopeId ? { envelope_id: envelopeId } : undefined);
    if (object.code === 'ACP_INTERNAL') logger.error('acp.http.internal_error', errorFields(error));
    sendCanonical(res, ACP_ERRORS[object.code].httpStatus, { [ACP_PART_KEYS.error]: object });
  };

  app.get(ACP_SCHEMA_PATH, (_req, res) => {
    res.type('application/schema+json').setHeader('Cache-Control', 'public, max-age=3600');
    res.send(ACP_SCHEMA_TEXT);
  });

  const router = express.Router();
  router.use(options.auth);
  router.post(
    '/envelopes',
    express.raw({ type: () => true, limit: options.bodyLimitBytes }),
    (error: unknown, _req: Request, res: Response, _next: NextFunction) => fail(res, requestError(error)),
    async (req: Request, res: Response) => {
      // The shared edge (docs/host.md "Bad input"): UTF-8, JSON, and values JSON carries exactly.
      const check = checkJsonBytes(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      if (!check.ok || check.value === undefined) {
        const outOfProfile = !check.ok && check.problem !== 'utf8' && check.problem !== 'syntax';
        const message = outOfProfile ? "a JSON value is outside the receiver's limits" : 'body is not JSON';
        fail(
          res,
          new AcpError(
            'ACP_SCHEMA_INVALID',
            message,
            check.ok ? undefined : { details: { rule: check.problem } },
          ),
        );
        return;
      }
      const envelope: unknown = check.value;
      const envelopeId = isJsonObject(envelope) ? envelope.envelope_id : undefined;
      try {
        const before = Date.now();
        const ack = await options.receiver.ingest(envelope, {
          secure: options.secure,
          caller: options.callerOf(req),
        });
        logger.debug('acp.http.ingested', { transaction_id: ack.transaction_id, ms: Date.now() - before });
        sendCanonical(res, 200, { [ACP_PART_KEYS.ack]: ack });
      } catch (error) {
        fail(res, error, typeof envelopeId === 'string' ? envelopeId : undefined);
      }
    },
  );
  router.get('/transactions/:id/state', async (req: Request, res: Response) => {
    try {
      const { bytes } = await options.receiver.state(String(req.params.id), {
        caller: options.callerOf(req),
      });
      res.status(200).type(ACP_MEDIA_TYPE).send(bytes);
    } catch (error) {
      fail(res, error);
    }
  });
  router.get('/transactions/:id/events', async (req: Request, res: Response) => {
    const id = String(req.params.id);
    const lastEventId = req.get('last-event-id');
    const after = Number(req.query.after ?? lastEventId ?? 0);
    const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
    if (
      !Number.isSafeInteger(after) ||
      after < 0 ||
      (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    ) {
      fail(res, new AcpError('ACP_SCHEMA_INVALID', 'after and limit must be non-negative integers'));
      return;
    }
    try {
      if (req.accepts(['application/json', 'text/event-stream']) === 'text/event-stream') {
        await follow(
          res,
          options.receiver,
          { id, after, caller: options.callerOf(req) },
          options.sseKeepaliveMs ?? SSE_KEEPALIVE_MS,
        );
        return;
      }
      const page = await options.receiver.events(id, { after, limit, caller: options.callerOf(req) });
      sendCanonical(res, 200, page);
    } catch (error) {
      if (res.headersSent) res.end();
      else fail(res, error);
    }
  });
  // Errors Express raises about the request itself (a path segment that is not valid percent-encoding).
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) =>
    fail(res, requestError(error)),
  );
  app.use(ACP_HTTP_PREFIX, router);
}

/**
 * Maps an error Express raised about the request — `express.raw`'s (body-parser's `http-errors`, which
 * carry a `type`), or the router's for a path that does not decode — to a coded error, so the request is
 * answered like any other refusal instead of reaching the app's last-resort handler.
 */
function requestError(error: unknown): unknown {
  const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
  if (type === 'entity.too.large') return new AcpError('ACP_PAYLOAD_TOO_LARGE');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the request could not be read');
  }
  return error;
}

/**
 * Follows the event stream as Server-Sent Events until the client goes away (bounded in time). An unknown
 * transaction is answered with an error object first; after that the headers go out at once, so a follower
 * of a quiet transaction is not left waiting for a response. `id:` is the event's seq, so a reconnecting
 * client resumes with `Last-Event-ID`. A comment every `keepaliveMs` keeps proxies from closing a quiet
 * stream; when the client reads slower than events arrive, writing waits for `drain`.
 */
async function follow(
  res: Response,
  receiver: AcpReceiver,
  { id, after, caller }: { id: string; after: number; caller: string },
  keepaliveMs: number,
): Promise<void> {
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
    }, keepaliveMs);
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
 * and charset handling) would only add work to every envelope's answer (issue 10).
 */
function sendCanonical(res: Response, status: number, body: unknown): void {
  const bytes = Buffer.from(canonicalJson(body), 'utf8');
  res.writeHead(status, { 'Content-Type': ACP_MEDIA_TYPE, 'Content-Length': bytes.length });
  res.end(bytes);
}
