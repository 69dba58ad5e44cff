import { GrpcUnreachableError } from '../../a2a/grpc-wire.js';
import { fail, skip, type Check, type CheckOutcome, type ConformContext } from '../check.js';
import { endpointsOf, WIRE_TRANSPORTS, type Endpoint, type WireTransport } from './wire.js';

/** A check of the agent's answers over one A2A transport. */
export interface WireCheck extends Omit<Check, 'run' | 'transport'> {
  run(ctx: ConformContext, transport: WireTransport): Promise<CheckOutcome>;
}

/**
 * The suffix a transport adds to a wire check's id: none for JSON-RPC (the ids the kit had before it
 * spoke the other transports), `-rest` for HTTP+JSON, `-grpc` for gRPC.
 */
export const TRANSPORT_SUFFIX: Record<WireTransport, string> = {
  JSONRPC: '',
  'HTTP+JSON': '-rest',
  GRPC: '-grpc',
};

/** The reason of a thrown call error when the interface did not answer, or nothing (a bug: rethrown). */
function unanswered(error: unknown): string | undefined {
  if (error instanceof GrpcUnreachableError) return error.message;
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'TimeoutError' || error.name === 'AbortError')
    return `no answer in time (${error.message})`;
  if (error instanceof TypeError && error.message === 'fetch failed') {
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    return `the connection failed${cause ? ` (${cause})` : ''}`;
  }
  return undefined;
}

/** Runs `check` over `endpoint`; an interface that does not answer fails it with the evidence. */
async function over(check: WireCheck, ctx: ConformContext, endpoint: Endpoint): Promise<CheckOutcome> {
  try {
    return await check.run(ctx, endpoint.transport);
  } catch (error) {
    const reason = unanswered(error);
    if (reason === undefined) throw error;
    // A2A v1.0 §5: every interface the card lists is one the agent serves; listed but silent is a failure.
    return fail(`the card lists ${endpoint.transport} at ${endpoint.url}, which did not answer: ${reason}`);
  }
}

/**
 * One check per A2A v1.0 transport (JSON-RPC, HTTP+JSON, gRPC; ids per {@link TRANSPORT_SUFFIX}), each
 * with its own probes, task ids and budget reservations. A check skips when the card lists no interface
 * of its transport, and fails when the listed interface does not answer.
 */
export function perTransport(check: WireCheck): Check[] {
  return WIRE_TRANSPORTS.map((transport) => ({
    id: `${check.id}${TRANSPORT_SUFFIX[transport]}`,
    binding: check.binding,
    transport,
    title: check.title,
    spec: check.spec,
    run: (ctx) => {
      const endpoint = endpointsOf(ctx.card).find((e) => e.transport === transport);
      if (endpoint === undefined)
        return Promise.resolve(skip(`the card lists no A2A v1.0 ${transport} interface`));
      return over(check, ctx, endpoint);
    },
  }));
}
