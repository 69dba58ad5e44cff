import type { Check, CheckOutcome, ConformContext } from '../../src/conform/check.js';
import { fetchTrusting } from '../../src/shared/fetch.js';

/**
 * A {@link ConformContext} for an agent, built the way the runner builds one but without it: the card
 * fetched from the well-known path, no budget (every reservation refused), a generous step timeout.
 */
export async function conformContext(
  url: string,
  options: { caCert?: string | undefined; token?: string } = {},
): Promise<ConformContext> {
  const res = await fetchTrusting(options.caCert)(`${url}/.well-known/agent-card.json`);
  if (!res.ok) throw new Error(`the card answered HTTP ${res.status}`);
  return {
    url,
    card: await res.json(),
    maxSpendCu: 0,
    token: options.token,
    caCert: options.caCert,
    timeoutMs: 10_000,
    reserve: (cu) => cu === 0,
  };
}

/** Runs `checks` one after the other, as the runner does; a throw is counted as `fail`. */
export async function runChecks(
  checks: readonly Check[],
  ctx: ConformContext,
): Promise<Map<string, CheckOutcome>> {
  const outcomes = new Map<string, CheckOutcome>();
  for (const check of checks) {
    outcomes.set(
      check.id,
      await check.run(ctx).catch((error: unknown) => ({ status: 'fail' as const, evidence: String(error) })),
    );
  }
  return outcomes;
}

/** The ids of the checks that ended with `status`. */
export function idsWith(outcomes: Map<string, CheckOutcome>, status: CheckOutcome['status']): string[] {
  return [...outcomes].filter(([, o]) => o.status === status).map(([id]) => id);
}
