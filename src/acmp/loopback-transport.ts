import { ACMP_METHOD } from './constants.js';
import { AcmpError } from './errors.js';
import { encodeEventRoot, encodeRequestRoot, eventOfRoot, parseAcmpRoot } from './messages.js';
import type { AcmpBuyerTransport, AcmpInbound } from './buyer.js';
import type { AcmpProvider } from './provider-types.js';

/** Options of {@link createLoopbackTransport}. */
export interface LoopbackOptions {
  /** Whether the "connection" carries notifications (default true). */
  canStream?: boolean;
  /** Test hook: rewrite or drop (return undefined) each provider message on its way to the buyer. */
  mapInbound?: (event: AcmpInbound) => AcmpInbound | undefined;
}

/**
 * An in-process {@link AcmpBuyerTransport} wiring a buyer core to a provider core. Every message goes
 * through the binding's root encoding and JSON text (so codecs are exercised as on a real wire).
 */
export function createLoopbackTransport(
  provider: AcmpProvider,
  options: LoopbackOptions = {},
): AcmpBuyerTransport {
  const canStream = options.canStream ?? true;
  const wire = <T>(value: T): unknown => JSON.parse(JSON.stringify(value));
  return {
    async *send(params, { signal }) {
      const request = parseAcmpRoot(wire(encodeRequestRoot(ACMP_METHOD.invoke, params)));
      if (request.kind !== 'request') throw new AcmpError(-32600);
      for await (const event of provider.invoke(request.params, { canStream, signal })) {
        const received = eventOfRoot(parseAcmpRoot(wire(encodeEventRoot(event))));
        if (received === undefined) throw new AcmpError(-32601);
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
