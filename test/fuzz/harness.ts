import { replyProblems, type RawReply } from '../helpers/wire-reply.js';
import type { Endpoint, FuzzRequest } from './request.js';

/** How long one fuzz request may take; a stream still open then is cut (a live task's SSE may run on). */
const DEADLINE_MS = 5_000;

/** What one request got, and what was wrong with it. */
export interface FuzzOutcome {
  status: number;
  problems: string[];
}

/**
 * Sends one fuzz request and checks the reply against the invariants (test/helpers/wire-reply.ts): no
 * 5xx, no internal text, coded errors, no `retryable: true`. A server-sent event stream is read to its
 * end, or cut at the deadline; any other reply that does not complete in time is a problem.
 */
export async function sendFuzz(baseUrl: string, request: FuzzRequest): Promise<FuzzOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), DEADLINE_MS);
  let res: Response;
  try {
    res = await fetch(baseUrl + request.path, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: controller.signal,
    });
  } catch (error) {
    clearTimeout(timer);
    return { status: 0, problems: [`no reply: ${(error as Error).name}`] };
  }
  const stream = (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
  let text = '';
  let cut = false;
  try {
    text = await res.text();
  } catch {
    cut = true;
  } finally {
    clearTimeout(timer);
  }
  if (cut && !stream) return { status: res.status, problems: ['reply did not complete in time'] };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const reply: RawReply = { status: res.status, headers: res.headers, text, body };
  return { status: res.status, problems: replyProblems(reply) };
}

/** Counts of replies by endpoint and status, and the first few failures with the request that caused them. */
export class FuzzStats {
  readonly counts = new Map<string, number>();
  /** The first failures (at most 20); {@link failed} counts them all. */
  readonly failures: { request: FuzzRequest; outcome: FuzzOutcome }[] = [];
  failed = 0;

  record(request: FuzzRequest, outcome: FuzzOutcome): void {
    const key = `${request.endpoint} ${outcome.status}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (outcome.problems.length === 0) return;
    this.failed++;
    if (this.failures.length < 20) this.failures.push({ request, outcome });
  }

  total(endpoint?: Endpoint): number {
    let sum = 0;
    for (const [key, n] of this.counts)
      if (endpoint === undefined || key.startsWith(`${endpoint} `)) sum += n;
    return sum;
  }

  /** A table: endpoint, status, count. */
  table(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, n]) => `${key.padEnd(14)} ${String(n).padStart(7)}`)
      .join('\n');
  }
}

/** A request shown for a failure report: method, path, headers and the body's start (bytes as text). */
export function describeRequest(request: FuzzRequest): string {
  const body = request.body === undefined ? '' : Buffer.from(request.body).toString('utf8');
  return `${request.method} ${request.path} ${JSON.stringify(request.headers)} ${body.length > 400 ? body.slice(0, 400) + '…' : body}`;
}
