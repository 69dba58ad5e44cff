import { readFileSync } from 'node:fs';
import { acpPeerOf, createAcpClient } from '../a2a/acp/client.js';
import { fetchAgentCard } from '../a2a/client.js';
import { ACP_KINDS } from '../acpspec/constants.js';
import { isAcpError, type AcpError } from '../acpspec/errors.js';
import { createAcpSenderCore, type AcpSenderCore } from '../acpspec/sender.js';
import { AcpHttpStatusError, createAcpHttpClient, type AcpHttpClient } from '../http/acp-client.js';
import { sleep } from '../shared/async.js';
import { errorCode, isLocalError, LocalError } from '../shared/errors.js';
import { canonicalJson } from '../shared/jcs.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { UsageError, type CliIo } from './io.js';

/** Flags shared by the remote `acp` sub-commands. */
export interface AcpRemoteFlags {
  http?: boolean;
  token?: string;
  ca?: string;
  'data-dir'?: string;
  follow?: boolean;
  after?: string;
  count?: string;
}

/** First and largest pause before reopening a followed event stream that ended. */
const FOLLOW_RETRY_MIN_MS = 250;
const FOLLOW_RETRY_MAX_MS = 5_000;

interface Connection {
  url: string;
  token: string | undefined;
  caCert: string | undefined;
}

function connect(url: string | undefined, flags: AcpRemoteFlags, io: CliIo): Connection {
  if (!url) throw new UsageError('missing <agent-url>');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`"${url}" is not an http(s) URL`);
  return {
    url: url.replace(/\/+$/, ''),
    token: tokenFromFlags(flags, io.env),
    caCert: caFromFlags(flags, io.env),
  };
}

function httpClient(c: Connection): AcpHttpClient {
  return createAcpHttpClient({
    baseUrl: c.url,
    ...(c.token ? { token: c.token } : {}),
    ...(c.caCert ? { caCert: c.caCert } : {}),
  });
}

/**
 * A sender over the chosen binding. Both read the receiver's card first (seed "Declaring Support"), so the
 * same local refusals apply: a kind the receiver does not accept, personal data to an `http:` URL.
 */
async function sender(c: Connection, http: boolean): Promise<AcpSenderCore> {
  const options = { ...(c.token ? { token: c.token } : {}), ...(c.caCert ? { caCert: c.caCert } : {}) };
  if (!http) return createAcpClient({ agentUrl: c.url, ...options });
  const peer = acpPeerOf(await fetchAgentCard(c.url, options));
  return createAcpSenderCore({ transport: httpClient(c).transport, peer, self: { emits: ACP_KINDS } });
}

/** Prints a coded ACPspec error with every issue it lists; exit code 1. */
function printAcpError(error: AcpError, io: CliIo): number {
  io.err(`error ${error.code}: ${error.message}`);
  const details = error.data as
    { issues?: { pointer?: string; keyword?: string; rule?: string; message?: string }[] } | undefined;
  if (Array.isArray(details?.issues)) {
    for (const issue of details.issues)
      io.err(
        `  ${issue.pointer || '/'}  ${issue.keyword ?? issue.rule ?? ''}${issue.message ? `: ${issue.message}` : ''}`,
      );
  } else if (details !== undefined) {
    io.err(`  details: ${canonicalJson(details)}`);
  }
  return 1;
}

async function coded(io: CliIo, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    if (isAcpError(error)) return printAcpError(error, io);
    throw error;
  }
}

/** A JSON file's value. @throws LocalError naming the file and why it cannot be used. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    const code = errorCode(cause);
    throw new LocalError('NOT_FOUND', `cannot read ${file} (${String(code ?? cause)}): check the path`, {
      cause,
    });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    throw new LocalError('CONFIG_INVALID', `${file} is not JSON: ${why}`, { cause });
  }
}

/** `acp send <agent-url> <envelope.json>`: prints `{"acp_ack": …}` or the coded error. */
export function acpSend(positionals: string[], flags: AcpRemoteFlags, io: CliIo): Promise<number> {
  const [url, file, extra] = positionals;
  if (!file || extra !== undefined) throw new UsageError('acp send takes <agent-url> <envelope.json>');
  const c = connect(url, flags, io);
  const envelope = readJsonFile(file);
  return coded(io, async () => {
    const ack = await (await sender(c, flags.http === true)).send(envelope as never);
    io.out(JSON.stringify({ acp_ack: ack }, null, 2));
    return 0;
  });
}

/** `acp state <agent-url> <transaction-id>`: prints the snapshot's canonical bytes (A2A or `--http`). */
export function acpState(positionals: string[], flags: AcpRemoteFlags, io: CliIo): Promise<number> {
  const [url, transactionId, extra] = positionals;
  if (!transactionId || extra !== undefined)
    throw new UsageError('acp state takes <agent-url> <transaction-id>');
  const c = connect(url, flags, io);
  return coded(io, async () => {
    if (flags.http) io.out((await httpClient(c).state(transactionId)).bytes.toString('utf8'));
    else io.out(canonicalJson(await (await sender(c, false)).requestState(transactionId)));
    return 0;
  });
}

/**
 * Whether a follow failed because the connection did (refused, reset, cut off mid-stream, a gateway
 * answering 502/503/504 while the receiver restarts) rather than because the receiver refused.
 */
function isConnectionLoss(error: unknown): boolean {
  if (isAcpError(error) || isLocalError(error)) return false;
  if (error instanceof AcpHttpStatusError)
    return error.status === 502 || error.status === 503 || error.status === 504;
  return error instanceof TypeError || typeof errorCode(error) === 'string';
}

/** `fetch` failed before any response (undici's "fetch failed"), as opposed to a stream cut off later. */
function isConnectFailure(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'fetch failed';
}

/** The innermost message of an error chain, with its code (`connect ECONNREFUSED …`, `other side closed`). */
function causeOf(error: unknown): string {
  let e: unknown = error;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  const code = errorCode(e);
  const message = e instanceof Error ? e.message : String(e);
  return typeof code === 'string' && !message.includes(code) ? `${message}, ${code}` : message;
}

function count(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a non-negative integer`);
  return Number(value);
}

/**
 * `acp events <agent-url> <transaction-id> [--follow] [--after n] [--count n]` over the HTTPS route: one
 * NDJSON line `{"seq", "event"}` per event. `--follow` keeps reading (Server-Sent Events) until Ctrl-C,
 * or until `--count` events were printed.
 */
export function acpEvents(positionals: string[], flags: AcpRemoteFlags, io: CliIo): Promise<number> {
  const [url, transactionId, extra] = positionals;
  if (!transactionId || extra !== undefined)
    throw new UsageError('acp events takes <agent-url> <transaction-id>');
  const c = connect(url, flags, io);
  const after = count('after', flags.after) ?? 0;
  const limit = count('count', flags.count);
  const http = httpClient(c);
  return coded(io, async () => {
    let printed = 0;
    const print = (seq: number, event: unknown): boolean => {
      io.out(canonicalJson({ seq, event }));
      return limit !== undefined && ++printed >= limit;
    };
    if (!flags.follow) {
      for (let cursor: number | undefined = after; cursor !== undefined;) {
        const page = await http.events(transactionId, { after: cursor });
        for (const [i, event] of page.events.entries()) if (print(cursor + i + 1, event)) return 0;
        cursor = page.next;
      }
      return 0;
    }
    const stop = new AbortController();
    const onSigint = (): void => stop.abort();
    process.once('SIGINT', onSigint);
    try {
      // The receiver bounds one stream in time; a stream that ends is resumed after the last seq. The pause
      // before reopening doubles while streams end without events (a proxy, a receiver going down).
      // A connection that breaks (the receiver restarts, the network drops) is reopened the same way, after
      // the last seq printed; only a coded refusal (401, 404, an acp_error) ends the command.
      let retryMs = FOLLOW_RETRY_MIN_MS;
      let lost = false;
      let reached = false;
      for (let cursor = after; !stop.signal.aborted;) {
        try {
          for await (const { seq, ...event } of http.follow(transactionId, {
            after: cursor,
            signal: stop.signal,
          })) {
            cursor = seq;
            retryMs = FOLLOW_RETRY_MIN_MS;
            lost = false;
            if (print(seq, event)) return 0;
          }
          reached = true;
        } catch (error) {
          if (stop.signal.aborted) break;
          // A receiver never reached (wrong URL, nothing listening) fails at once rather than being retried.
          if (!isConnectionLoss(error) || (!reached && isConnectFailure(error))) throw error;
          reached = true;
          if (!lost)
            io.err(
              `connection to ${c.url} lost (${causeOf(error)}); reconnecting, then resuming after event ${cursor}`,
            );
          lost = true;
        }
        await sleep(retryMs, { signal: stop.signal }).catch(() => undefined);
        retryMs = Math.min(retryMs * 2, FOLLOW_RETRY_MAX_MS);
      }
    } finally {
      process.off('SIGINT', onSigint);
      stop.abort();
    }
    return 0;
  });
}
