import type { DIDResolutionResult, DIDResolver } from 'did-resolver';
import { parseJsonBytes } from '../../shared/json-edge.js';

/*
 * The did:web method (W3C CCG did:web): `did:web:<host>[%3A<port>][:<path segment>…]` names the document
 * at `https://<host>[:<port>]/.well-known/did.json`, or at `https://<host>[:<port>]/<path…>/did.json`
 * when there are path segments.
 */

const DOC_NAME = 'did.json';
/** Where a host whose public URL has no path serves its DID document. */
export const WELL_KNOWN_DID_PATH = `/.well-known/${DOC_NAME}`;
const WELL_KNOWN_PATH = WELL_KNOWN_DID_PATH;

function pathSegments(url: URL): string[] {
  return url.pathname.split('/').filter((segment) => segment !== '');
}

/**
 * The `did:web` of a host's public URL: its host (lower-case; a port as `%3A<port>`), then one `:`
 * segment per path segment (percent-encoded). Query and fragment are ignored.
 */
export function didWebOf(publicUrl: string): string {
  const url = new URL(publicUrl);
  const segments = pathSegments(url).map((s) => encodeURIComponent(decodeURIComponent(s)));
  return ['did:web', encodeURIComponent(url.host), ...segments].join(':');
}

/** The path under which a host with that public URL serves its DID document. */
export function didWebDocumentPath(publicUrl: string): string {
  const segments = pathSegments(new URL(publicUrl));
  return segments.length === 0 ? WELL_KNOWN_PATH : `/${segments.join('/')}/${DOC_NAME}`;
}

/** The HTTPS URL of a `did:web` document, or `undefined` when the method-specific id is not one. */
export function didWebDocumentUrl(methodId: string): URL | undefined {
  const [host = '', ...segments] = methodId.split(':').map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return '';
    }
  });
  if (host === '' || segments.some((s) => s === '' || s.includes('/')) || /[/?#@]/.test(host))
    return undefined;
  try {
    const base = new URL(`https://${host}`);
    if (base.host !== host.toLowerCase()) return undefined;
    const path =
      segments.length === 0 ? WELL_KNOWN_PATH : `/${segments.map(encodeURIComponent).join('/')}/${DOC_NAME}`;
    return new URL(path, base);
  } catch {
    return undefined;
  }
}

/** What the did:web method resolver fetches with. */
export interface WebDidMethodOptions {
  /** The fetch to use (the project's `fetchTrusting(ca)` in tests with a test CA). */
  readonly fetch: typeof fetch;
  /** The largest document read, in bytes. */
  readonly maxBytes: number;
}

function failed(error: string, message: string): DIDResolutionResult {
  return { didResolutionMetadata: { error, message }, didDocument: null, didDocumentMetadata: {} };
}

/**
 * The did:web method as a `did-resolver` method resolver: one HTTPS GET (no redirects), the abort
 * signal of `options.signal` (the caller's deadline), a size cap, and JSON parsing; the document's
 * shape and id are judged by the caller. `web-did-resolver` is not used: it fetches through its own
 * `cross-fetch` with no timeout and no way to trust a CA (docs/acmp-identity.md "Resolution").
 */
export function webDidMethod(options: WebDidMethodOptions): Record<string, DIDResolver> {
  const resolve: DIDResolver = async (...args) => {
    const [, parsed, , resolution] = args;
    const url = didWebDocumentUrl(parsed.id);
    if (!url) return failed('invalidDid', 'not a did:web identifier');
    const signal = resolution.signal instanceof AbortSignal ? resolution.signal : undefined;
    let bytes: Uint8Array | undefined;
    try {
      const response = await options.fetch(url, {
        signal,
        redirect: 'error',
        headers: { accept: 'application/did+json, application/json' },
      });
      if (!response.ok) {
        await response.body?.cancel();
        return failed('notFound', `HTTP ${response.status}`);
      }
      bytes = await readCapped(response, options.maxBytes);
    } catch {
      return failed('notFound', signal?.aborted === true ? 'timed out' : 'fetch failed');
    }
    if (!bytes) return failed('notFound', 'document too large');
    const parsedJson = parseJsonBytes(bytes);
    if (!parsedJson.ok) return failed('notFound', 'document is not JSON');
    return {
      didResolutionMetadata: { contentType: 'application/did+json' },
      didDocument: parsedJson.value as DIDResolutionResult['didDocument'],
      didDocumentMetadata: {},
    };
  };
  return { web: resolve };
}

/** The body, or `undefined` once it passes `maxBytes` (leaving the loop cancels the rest). */
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
