import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onCleanup } from './host.js';

/** One POST a webhook received. */
export interface WebhookPost {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback webhook receiver that records every request; closed by the shared cleanup. */
export interface Webhook {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** `<origin>/hook`. */
  url: string;
  posts: WebhookPost[];
  /** Resolves once `count` POSTs have arrived (at once when they already have). */
  received(count: number): Promise<WebhookPost[]>;
}

/**
 * Starts a webhook on 127.0.0.1:0. `answer` writes the response to the n-th POST (0-based; default 200);
 * requests other than POST are answered 405 and not recorded.
 */
export async function startWebhook(answer?: (res: ServerResponse, index: number) => void): Promise<Webhook> {
  const posts: WebhookPost[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      posts.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (answer) answer(res, posts.length - 1);
      else res.writeHead(200).end();
      for (const w of waiters.filter((w) => posts.length >= w.count)) w.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/hook`,
    posts,
    received: (count) =>
      posts.length >= count
        ? Promise.resolve(posts.slice())
        : new Promise((resolve) => waiters.push({ count, resolve: () => resolve(posts.slice()) })),
  };
}
