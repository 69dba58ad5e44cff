import { fail, pass, skip, type Check, type CheckOutcome, type ConformContext } from '../check.js';
import { endpointsOf, type WireTransport } from './wire.js';

/** A check of the agent's answers over one A2A transport. */
export interface WireCheck extends Omit<Check, 'run'> {
  run(ctx: ConformContext, transport: WireTransport): Promise<CheckOutcome>;
}

/**
 * Runs a wire check over every v1.0 transport of the card the kit speaks (JSON-RPC, then HTTP+JSON): it
 * fails when it fails over any (the evidence names the transport), passes when it passed over at least
 * one and failed over none (the evidence then says what was skipped where), and skips otherwise.
 */
export function overTransports(check: WireCheck): Check {
  return {
    id: check.id,
    binding: check.binding,
    title: check.title,
    spec: check.spec,
    run: async (ctx) => {
      const endpoints = endpointsOf(ctx.card);
      if (endpoints.length === 0) return skip('the card lists no A2A v1.0 JSON-RPC or HTTP+JSON interface');
      const outcomes: [WireTransport, CheckOutcome][] = [];
      for (const { transport } of endpoints) outcomes.push([transport, await check.run(ctx, transport)]);
      const said = (status: string): string[] =>
        outcomes.filter(([, o]) => o.status === status).map(([t, o]) => `[${t}] ${o.evidence ?? status}`);
      if (said('fail').length) return fail(said('fail').join('; '));
      if (!outcomes.some(([, o]) => o.status === 'pass')) return skip(said('skip').join('; '));
      const skipped = said('skip');
      return skipped.length ? { ...pass(), evidence: `skipped ${skipped.join('; ')}` } : pass();
    },
  };
}
