import { ACMP_METHOD } from './wire/constants.js';
import { AcmpError } from './wire/errors.js';
import { encodeEventRoot, encodeRequestRoot, eventOfRoot, parseAcmpRoot } from './wire/messages.js';
import { type CancelParams, type InvokeParams } from './wire/task-messages.js';
import type { AcmpBuyerTransport, AcmpInbound } from './buyer/buyer.js';
import type { AcmpProvider } from './provider/provider-types.js';

/** Options of {@link createLoopbackTransport}. */
export interface LoopbackOptions {
  /** Whether the "connection" carries notifications (default true). */
  canStream?: boolean;
  /** Test hook: rewrite or drop (return undefined) each provider message on its way to the buyer. */
  mapInbound?: (event: AcmpInbound) => AcmpInbound | undefined;
}

/**
 * Creates an in-process {@link AcmpBuyerTransport} wiring a buyer core to a provider core. Every message
 * goes through the binding's root encoding and JSON text (so codecs are exercised as on a real wire).
 */
export function createLoopbackTransport(
  provider: AcmpProvider,
  options: LoopbackOptions = {},
): AcmpBuyerTransport {
  return new LoopbackTransport(provider, options);
}

/** The loopback "connection": one provider, reached through the wire encoding. */
class LoopbackTransport implements AcmpBuyerTransport {
  private readonly canStream: boolean;

  constructor(
    private readonly provider: AcmpProvider,
    private readonly options: LoopbackOptions,
  ) {
    this.canStream = options.canStream ?? true;
  }

  async *send(
    params: InvokeParams,
    { signal }: { stream: boolean; signal: AbortSignal },
  ): AsyncIterable<AcmpInbound> {
    const request = parseAcmpRoot(wire(encodeRequestRoot(ACMP_METHOD.invoke, params)));
    if (request.kind !== 'request') throw new AcmpError(-32600);
    for await (const event of this.provider.invoke(request.params, { canStream: this.canStream, signal })) {
      const received = eventOfRoot(parseAcmpRoot(wire(encodeEventRoot(event))));
      if (received === undefined) throw new AcmpError(-32601);
      const mapped = this.options.mapInbound ? this.options.mapInbound(received) : received;
      if (mapped !== undefined) yield mapped;
    }
  }

  async cancel(params: CancelParams, cancelOptions?: { signal?: AbortSignal }): Promise<void> {
    cancelOptions?.signal?.throwIfAborted();
    const request = parseAcmpRoot(wire(encodeRequestRoot(ACMP_METHOD.cancel, params)));
    if (request.kind === 'request') await this.provider.cancel(request.params);
  }
}

/** A value as the other end reads it after JSON text. */
function wire<T>(value: T): unknown {
  return JSON.parse(JSON.stringify(value));
}
