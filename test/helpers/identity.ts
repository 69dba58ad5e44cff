import { generateKeyPairSync } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentCard } from '@a2a-js/sdk';
import { didKeyOf } from '../../src/acmp/identity/did-key.js';
import { createKeySigner, type Signer } from '../../src/acmp/identity/signer.js';
import { onCleanup } from './cleanup.js';

/** A fresh did:key identity over a generated Ed25519 key (Layer 7 §2.1): no did:web server needed. */
export function didKeyIdentity(): { did: string; signer: Signer } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const identity = didKeyOf(publicKey);
  return { did: identity.did, signer: createKeySigner(identity, privateKey) };
}

/** What a {@link tamperingProxy} saw: the request bodies it forwarded. */
export interface TamperingProxy {
  readonly url: string;
  readonly requests: string[];
  /** `card` with every interface URL pointing at the proxy (so the buyer's calls pass through it). */
  route(card: AgentCard): AgentCard;
}

/**
 * A man in the middle on 127.0.0.1:0 in front of `target`: forwards every request and rewrites each
 * response body with `rewrite` (Layer 6 N19: an offer's price changed in transit). Closed by cleanup.
 */
export async function tamperingProxy(
  target: string,
  rewrite: (body: string) => string,
): Promise<TamperingProxy> {
  const requests: string[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      requests.push(body);
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: upstream.host, 'content-length': Buffer.byteLength(body) },
        },
        (reply) => {
          void readAll(reply).then((text) => {
            const changed = rewrite(text);
            const headers = { ...reply.headers, 'content-length': String(Buffer.byteLength(changed)) };
            delete headers['transfer-encoding'];
            res.writeHead(reply.statusCode ?? 502, headers).end(changed);
          });
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    route: (card) => ({
      ...card,
      supportedInterfaces: card.supportedInterfaces.map((i) => ({
        ...i,
        url: i.url.replace(upstream.origin, url),
      })),
    }),
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
