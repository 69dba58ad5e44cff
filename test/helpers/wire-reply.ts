/**
 * Raw requests and the invariants every reply to a bad request must keep (docs/host.md "Bad input"):
 * no 5xx, no internal text, every error coded, no `retryable: true` on a client error.
 */

/** A reply as the wire carried it. */
export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON (an SSE stream, an empty 204). */
  body: unknown;
}

/** Sends a request exactly as given (bytes, header and path untouched) and reads the whole reply. */
export async function sendRaw(
  url: string,
  init: { method?: string; body?: string | Uint8Array; headers?: Record<string, string> } = {},
  doFetch: typeof fetch = fetch,
): Promise<RawReply> {
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  const res = await doFetch(url, {
    method,
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/**
 * Text that must never reach the wire: JavaScript error names and messages, stack frames, file paths,
 * SQL and database messages.
 */
const INTERNAL_TEXT =
  /Cannot read|TypeError|RangeError|ReferenceError|Maximum call stack|is not a function|is not iterable|\bat (?:file:|node:|\/|async )|node_modules|\.(?:ts|js):\d+|SQLITE_|better-sqlite|duplicate key|syntax error at|relation "|value too long|invalid byte sequence|invalid input syntax|\bSELECT\b|\bINSERT\b/;

/** The code of an error reply in any of the host's shapes, or undefined when the body carries none. */
function errorCodeOf(body: unknown): string | number | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as {
    error?: { code?: unknown; status?: unknown };
    acp_error?: { code?: unknown };
    code?: unknown;
    message?: unknown;
  };
  if (b.acp_error && typeof b.acp_error.code === 'string' && b.acp_error.code.startsWith('ACP_'))
    return b.acp_error.code;
  // A v0.3 HTTP+JSON error is the JSON-RPC error object itself.
  if (typeof b.code === 'number' && typeof b.message === 'string') return b.code;
  if (b.error && typeof b.error.code === 'number') {
    // google.rpc.Status carries its status name too; a JSON-RPC error object carries a message.
    return typeof b.error.status === 'string' ? b.error.status : b.error.code;
  }
  return undefined;
}

/** What is wrong with a reply to a request that may be bad; [] when the reply keeps every invariant. */
export function replyProblems(reply: RawReply): string[] {
  const problems: string[] = [];
  if (reply.status >= 500) problems.push(`HTTP ${reply.status}`);
  if (INTERNAL_TEXT.test(reply.text)) problems.push(`internal text: ${INTERNAL_TEXT.exec(reply.text)?.[0]}`);
  if (reply.text.includes('"retryable":true')) problems.push('retryable: true');
  if (/"code":\s*-32603/.test(reply.text)) problems.push('JSON-RPC -32603');
  const rpcError = (reply.body as { error?: { code?: unknown } } | undefined)?.error;
  if (reply.status >= 400 && errorCodeOf(reply.body) === undefined) problems.push(`uncoded ${reply.status}`);
  if (rpcError !== undefined && typeof rpcError.code !== 'number')
    problems.push('error without a numeric code');
  return problems;
}
