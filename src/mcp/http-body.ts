import express, { type Request, type Response } from 'express';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { checkJsonValue, parseJsonBytes, type JsonProblem } from '../shared/json-edge.js';
import { isJsonObject } from '../shared/json.js';
import { outsideProfile } from './profile-error.js';

/**
 * What the edge made of a request's body: `parsed` (the SDK gets `value` as its `parsedBody` and reads
 * nothing), `unread` (not a JSON POST: the SDK reads and judges it exactly as without this edge), or
 * `answered` (refused here, `reason` for the log).
 */
export type McpBody =
  | { readonly kind: 'parsed'; readonly value: unknown }
  | { readonly kind: 'unread' }
  | { readonly kind: 'answered'; readonly reason: string };

/**
 * The host's one read of an MCP POST body (docs/acmp-mcp-binding.md §1, docs/host.md "Bad input"): the
 * bytes are read once within `limitBytes`, decoded and parsed once by the shared edge
 * (src/shared/json-edge.ts: UTF-8, JSON, the value profile), and a body the edge refuses is answered as
 * the SDK answers the same class of problem — 413 over the limit, -32700 for bytes that are not JSON,
 * -32602 naming the rule for a value outside the profile (in-band, as the ACMP methods answer it).
 * Only POSTs whose media type is JSON are read (the SDK's own test, `isJsonContentType`); everything
 * else reaches the SDK untouched, for its 415, its `GET` and `DELETE` answers.
 */
export function mcpBodyReader(limitBytes: number): (req: Request, res: Response) => Promise<McpBody> {
  const readBytes = bytesReader(limitBytes);
  return async (req, res) => {
    if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'])) return { kind: 'unread' };
    return judge(res, await readBytes(req, res), limitBytes);
  };
}

type BodyBytes = Buffer | 'too-large' | 'unreadable';

/** The answer to what was read: refused here, or the parsed value for the SDK. */
function judge(res: Response, bytes: BodyBytes, limitBytes: number): McpBody {
  if (bytes === 'too-large') {
    // The SDK adapter's answer (toNodeHandler), byte for byte: the rest of the body is never read.
    const message = `Payload Too Large: Request body must not exceed ${limitBytes} bytes`;
    const body = sdkError({ code: -32000, message });
    return send(res, { status: 413, body, reason: 'body-too-large', headers: { connection: 'close' } });
  }
  if (bytes === 'unreadable') {
    const message = 'Parse error: the request body could not be read';
    return send(res, { status: 400, body: sdkError({ code: -32700, message }), reason: 'body-unreadable' });
  }
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok || parsed.value === undefined) {
    // The SDK's parse error, which an empty body gets too; bytes that are not UTF-8 (RFC 8259 §8.1), which
    // the SDK alone would decode with U+FFFD in their place, say so.
    const rule = !parsed.ok && parsed.problem === 'utf8' ? { data: { rule: 'utf8' } } : {};
    const body = sdkError({ code: -32700, message: 'Parse error: Invalid JSON', ...rule });
    return send(res, { status: 400, body, reason: 'json-unreadable' });
  }
  const problem = checkJsonValue(parsed.value);
  if (problem) return refuseOutsideProfile(res, parsed.value, problem);
  return { kind: 'parsed', value: parsed.value };
}

/**
 * A value outside the profile: a request gets the -32602 in-band (HTTP 200, its id), as every ACMP method
 * answers it and as 2025-era clients can read it; a notification is ignored (202: JSON-RPC 2.0 §4.1
 * gives it no response); anything else (a batch, a posted response) gets the -32602 with a null id.
 */
function refuseOutsideProfile(res: Response, body: unknown, problem: JsonProblem): McpBody {
  const error = outsideProfile(problem).toObject();
  const reason = `json-${problem}`;
  if (isJsonObject(body) && typeof body.method === 'string') {
    if (!('id' in body)) return send(res, { status: 202, reason });
    if (typeof body.id === 'string' || typeof body.id === 'number')
      return send(res, { status: 200, body: { jsonrpc: '2.0', id: body.id, error }, reason });
  }
  return send(res, { status: 400, body: { jsonrpc: '2.0', id: null, error }, reason });
}

/** An error the way the SDK words its own HTTP-level refusals (key order jsonrpc, error, id; no id). */
function sdkError(error: { code: number; message: string }): unknown {
  return { jsonrpc: '2.0', error, id: null };
}

/** A refusal the edge writes itself: status, JSON body (none for a 202), the log reason, extra headers. */
interface EdgeReply {
  status: number;
  body?: unknown;
  reason: string;
  headers?: Record<string, string>;
}

function send(res: Response, reply: EdgeReply): McpBody {
  if (!res.destroyed) {
    const type = reply.body === undefined ? {} : { 'content-type': 'application/json' };
    res.writeHead(reply.status, { ...type, ...reply.headers });
    res.end(reply.body === undefined ? undefined : JSON.stringify(reply.body));
  }
  return { kind: 'answered', reason: reply.reason };
}

/**
 * The body's bytes, read by the same reader as the A2A edge's (body-parser's `raw`, src/a2a/host/json-body.ts):
 * a declared `Content-Length` over the limit is refused unread, reading stops as soon as more than the
 * limit has arrived, and a body cut short or in an encoding the reader cannot undo is not read.
 */
function bytesReader(limitBytes: number): (req: Request, res: Response) => Promise<BodyBytes> {
  const raw = express.raw({ limit: limitBytes, type: () => true });
  return (req, res) =>
    new Promise((resolve) => {
      raw(req, res, (err?: unknown) => {
        if (err !== undefined && err !== null) {
          const type = isJsonObject(err) ? err.type : undefined;
          resolve(type === 'entity.too.large' ? 'too-large' : 'unreadable');
        } else resolve(Buffer.isBuffer(req.body) ? req.body : 'unreadable');
      });
    });
}
