import { LocalError } from '../../shared/errors.js';

/** Wire strings of ACMP Layer 4 (escrow) and of our escrow profile, written once (STYLE.md "Names"). */

/** The seven Layer 4 methods [L4 §4]. */
export const ESCROW_METHOD = {
  lock: 'acmp/escrowLock',
  bind: 'acmp/escrowBind',
  release: 'acmp/escrowRelease',
  reclaim: 'acmp/escrowReclaim',
  claim: 'acmp/escrowClaim',
  dispute: 'acmp/escrowDispute',
  status: 'acmp/escrowStatus',
} as const;

/** One Layer 4 method name. */
export type EscrowMethod = (typeof ESCROW_METHOD)[keyof typeof ESCROW_METHOD];

/** Every Layer 4 method, in the order the card lists them (`accepts`, L4 §1). */
export const ESCROW_METHODS: readonly EscrowMethod[] = Object.values(ESCROW_METHOD);

/** Whether a method name is a Layer 4 method. */
export function isEscrowMethod(method: unknown): method is EscrowMethod {
  return ESCROW_METHODS.some((known) => known === method);
}

/**
 * The card extension of our escrow profile (settings of an escrow agent; accepted agents of a provider).
 * A URN we control — never a URI under a2agora.org (docs/acmp-escrow.md §2 "Agent Card").
 */
export const ESCROW_PROFILE_URI = 'urn:a2a-commerce:acmp-escrow:v0';

/** The `role` an escrow agent advertises in its ACMP capability object [L4 §1]. */
export const ESCROW_AGENT_ROLE = 'escrow-agent';

/** What happens to a dispute nobody resolves by its deadline (advertised; docs/acmp-escrow.md "Disputes"). */
export type DisputeDefault = 'refund_buyer' | 'pay_claim';

/** The escrow agent's policy, advertised on its card (`ESCROW_PROFILE_URI` params). */
export interface EscrowSettings {
  /** Challenge window when the buyer names none at lock or bind (L4 recommends 24 h). */
  readonly defaultChallengeWindowMs: number;
  readonly minChallengeWindowMs: number;
  readonly maxChallengeWindowMs: number;
  /** How long a dispute may stay open before {@link defaultOutcome} applies. */
  readonly disputeDeadlineMs: number;
  readonly defaultOutcome: DisputeDefault;
}

/** Our defaults: 24 h window within [1 min, 7 days]; disputes end after 7 days with a refund. */
export const DEFAULT_ESCROW_SETTINGS: EscrowSettings = {
  defaultChallengeWindowMs: 24 * 3_600_000,
  minChallengeWindowMs: 60_000,
  maxChallengeWindowMs: 7 * 24 * 3_600_000,
  disputeDeadlineMs: 7 * 24 * 3_600_000,
  defaultOutcome: 'refund_buyer',
};

/**
 * The settings an agent may start with: what its card advertises must hold for every escrow it opens, so
 * the default window lies in `[min, max]`, windows and the dispute deadline are exact whole milliseconds
 * (JSON and SQL carry them unchanged), a dispute has a positive deadline and a known default outcome.
 * @throws LocalError `CONFIG_INVALID` naming the first setting that does not hold.
 */
export function checkEscrowSettings(settings: EscrowSettings): EscrowSettings {
  const { defaultChallengeWindowMs: def, minChallengeWindowMs: min, maxChallengeWindowMs: max } = settings;
  const refuse = (why: string): never => {
    throw new LocalError('CONFIG_INVALID', `escrow settings: ${why}`);
  };
  const durations: readonly [string, number][] = [
    [WHAT.def, def],
    [WHAT.min, min],
    [WHAT.max, max],
    [WHAT.dispute, settings.disputeDeadlineMs],
  ];
  for (const [what, value] of durations)
    if (!Number.isSafeInteger(value) || value < 0)
      refuse(`${what} must be a whole number of milliseconds ≥ 0, not ${value}`);
  if (min > max) refuse(`the minimum challenge window ${min} ms is above the maximum ${max} ms`);
  if (def < min || def > max)
    refuse(`the default challenge window ${def} ms is outside the advertised range [${min}, ${max}] ms`);
  if (settings.disputeDeadlineMs === 0) refuse('the dispute deadline must be longer than 0 ms');
  if (settings.defaultOutcome !== 'refund_buyer' && settings.defaultOutcome !== 'pay_claim')
    refuse('the dispute default outcome must be refund_buyer or pay_claim');
  return settings;
}

const WHAT = {
  def: 'the default challenge window',
  min: 'the minimum challenge window',
  max: 'the maximum challenge window',
  dispute: 'the dispute deadline',
} as const;
