import { ACMP_METHOD } from './constants.js';
import { AcmpError } from './errors.js';
import { encodeErrorRoot, encodeRequestRoot, encodeResultRoot, parseAcmpRoot, type AcmpEvent } from './messages.js';
import type { AcmpBuyerTransport, AcmpInbound } from './buyer.js';
import type { AcmpProvider } from './provider-types.js';

/** Options of {@link createLoopbackTransport}. */
export interface LoopbackOptions {
  /** Whether the "connection" carries notifications (default true). */
  canStream?: boolean;
  /** Test hook: rewrite or drop (return undefined) each provider message on its way to the buyer. */
  mapInbound?: (event: AcmpInbound) => AcmpInbound | undefined;
}

/** The binding's data-Part root for a provider event (A2A binding §1). */
function encodeEvent(event: AcmpEvent): object {
  switch (event.kind) {
    case 'chunk':
      return encodeRequestRoot(ACMP_METHOD.streamChunk, event.params);
    case 'heartbeat':
      return encodeRequestRoot(ACMP_METHOD.heartbeat, event.params);
    case 'result':
      return encodeResultRoot(event.result);
    case 'error':
      return encodeErrorRoot(event.error);
  }
}

/** Decodes a root back into an event, as a binding would on receipt. */
function decodeEvent(root: unknown): AcmpInbound {
  const parsed = parseAcmpRoot(root);
  if (parsed.kind === 'result') return { kind: 'result', result: parsed.result };
  if (parsed.kind === 'error') return { kind: 'error', error: parsed.error };
  if (parsed.method === ACMP_METHOD.streamChunk) return { kind: 'chunk', params: parsed.params };
  if (parsed.method === ACMP_METHOD.heartbeat) return { kind: 'heartbeat', params: parsed.params };
  throw new AcmpError(-32601);
}

/**
 * An in-process {@link AcmpBuyerTransport} wiring a buyer core to a provider core. Every message goes
 * through the binding's root encoding and JSON text (so codecs are exercised as on a real wire).
 */
export function createLoopbackTransport(provider: AcmpProvider, options: LoopbackOptions = {}): AcmpBuyerTransport {
  const canStream = options.canStream ?? true;
  const wire = <T>(value: T): unknown => JSON.parse(JSON.stringify(value));
  return {
    async *send(params, { signal }) {
      const request = parseAcmpRoot(wire(encodeRequestRoot(ACMP_METHOD.invoke, params)));
      if (request.kind !== 'request') throw new AcmpError(-32600);
      for await (const event of provider.invoke(request.params, { canStream, signal })) {
        const received = decodeEvent(wire(encodeEvent(event)));
        const mapped = options.mapInbound ? options.mapInbound(received) : received;
        if (mapped !== undefined) yield mapped;
      }
    },
    async cancel(params, cancelOptions) {
      cancelOptions?.signal?.throwIfAborted();
      const request = parseAcmpRoot(wire(encodeRequestRoot(ACMP_METHOD.cancel, params)));
      if (request.kind === 'request') await provider.cancel(request.params);
    },
  };
}
