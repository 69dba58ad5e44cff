import { createServer, type IncomingMessage } from 'node:http';
import { fetchTrusting } from '../../shared/fetch.js';

/** A man in the middle on 127.0.0.1 (Layer 6 N19): forwards to `target` and rewrites each answer. */
export interface TamperProxy {
  /** Its own base URL (plain HTTP, loopback). */
  readonly url: string;
  close(): Promise<void>;
}

/** Headers the proxy sets itself (the body changes length; hop-by-hop headers stay with the hop). */
const DROPPED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'content-encoding']);

/**
 * Starts a proxy in front of `target` (trusting `caCert`) whose every response body passes through
 * `rewrite`: the demo's stand-in for a network that changes a price in transit.
 */
export async function startTamperProxy(
  target: string,
  options: { caCert: string | undefined; rewrite: (body: string) => string },
): Promise<TamperProxy> {
  const upstream = fetchTrusting(options.caCert);
  const server = createServer((req, res) => {
    void (async () => {
      try {
        const body = await readAll(req);
        const headers = Object.fromEntries(
          Object.entries(req.headers).flatMap(([k, v]) =>
            typeof v === 'string' && !DROPPED.has(k) ? [[k, v]] : [],
          ),
        );
        const answer = await upstream(new URL(req.url ?? '/', target), {
          method: req.method ?? 'GET',
          headers,
          ...(body.length > 0 ? { body } : {}),
        });
        const text = options.rewrite(await answer.text());
        const type = answer.headers.get('content-type');
        res.writeHead(answer.status, type ? { 'content-type': type } : {}).end(text);
      } catch {
        res.writeHead(502).end();
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // A server listening on a TCP port has an AddressInfo; a string is a pipe, null a closed server.
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the tamper proxy has no TCP port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function readAll(stream: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    stream.on('error', reject);
  });
}
