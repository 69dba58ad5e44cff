import { LocalError } from '../../shared/errors.js';
import { ANONYMOUS_IDENTITY, isIdentity } from '../../shared/identity.js';
import type { JsonValue } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { formatCu } from './amounts.js';
import type { EscrowSettings } from './constants.js';
import { isDid, type VerifiedRequest } from './did-parties.js';
import { escrowError } from './errors.js';
import type { MutatingCommand } from './messages.js';
import { remainingOf, type EscrowClaim, type EscrowRecord } from './record.js';
import type { TransitionLog } from './transitions.js';

/**
 * The mutating commands of the Layer 4 state machine [L4 §4.2–§4.6], pure like the rest of it: each checks
 * its rules against the advanced record, records its transition and returns its result object.
 */

/** Who applies a command, when, and under which advertised settings. */
export interface CommandContext {
  /** The authenticated caller (already authorised for the command). */
  readonly party: string;
  readonly now: number;
  readonly settings: EscrowSettings;
  /** The request's Layer 7 envelope as verified against the escrow's DID party, kept as evidence. */
  readonly verified?: VerifiedRequest | undefined;
}

type Command<M extends MutatingCommand['method']> = Extract<MutatingCommand, { method: M }>;

/** L4 §4.2 `acmp/escrowBind`. */
export function bind(
  log: TransitionLog,
  c: Command<'acmp/escrowBind'>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  // L4 §4.2: bind happens once; a rebind (also after a payee named at lock) is -35003.
  if (r.payee !== null) throw escrowError('invalidState', 'already_bound');
  if (r.state !== 'open') throw escrowError('invalidState', 'not_open', { state: r.state });
  checkPayee(c.payee, r.buyer);
  const windowMs = c.windowMs === undefined ? r.challengeWindowMs : windowOf(c.windowMs, context.settings);
  if (c.agreedPrice !== null && c.agreedPrice > remainingOf(r))
    throw escrowError('exceedsRemaining', 'agreed_price_above_remaining');
  log.step({
    kind: 'bind',
    actor: context.party,
    at: context.now,
    patch: { payee: c.payee, challengeWindowMs: windowMs, agreedPrice: c.agreedPrice },
    data: { payee_id: c.payee, challenge_window_ms: windowMs },
  });
  return {
    escrow_id: r.escrowId,
    payee_id: c.payee,
    challenge_window_ms: windowMs,
    ...(c.agreedPrice === null ? {} : { agreed_price_cu: formatCu(c.agreedPrice) }),
  };
}

/** L4 §4.3 `acmp/escrowRelease`. */
export function release(
  log: TransitionLog,
  c: Command<'acmp/escrowRelease'>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  if (r.state !== 'open' && r.state !== 'claimed')
    throw escrowError('invalidState', 'not_open', { state: r.state });
  // L4 §4.3: payee_id MUST equal the bound payee (an unbound escrow is bound implicitly).
  if (r.payee !== null && c.payee !== r.payee) throw escrowError('notAuthorized', 'payee_mismatch');
  if (r.payee === null) checkPayee(c.payee, r.buyer);
  if (c.amount > remainingOf(r)) throw escrowError('exceedsRemaining');
  // L4 §4.3: in `claimed`, only a release of at least the claim resolves it ("must dispute, not undercut").
  if (r.state === 'claimed') {
    const pending = pendingClaim(r);
    if (c.amount < pending.amount)
      throw escrowError('invalidState', 'below_claim', { claim_cu: formatCu(pending.amount) });
  }
  const released = r.released + c.amount;
  const claimedTasks = r.claim ? [...r.claimedTasks, r.claim.taskId].filter(unique) : r.claimedTasks;
  const state = released + r.reclaimed === r.locked ? 'closed' : 'open';
  log.step({
    kind: 'release',
    actor: context.party,
    at: context.now,
    patch: { payee: c.payee, state, released, claim: null, claimedTasks, settled: true },
    data: { amount_cu: formatCu(c.amount), task_id: c.taskId, proof: c.proof ?? null },
    pay: [{ to: 'payee', amount: c.amount, kind: 'release' }],
  });
  return {
    escrow_id: r.escrowId,
    released_cu: formatCu(c.amount),
    remaining_cu: formatCu(remainingOf(log.record)),
    state,
  };
}

/** L4 §4.4 `acmp/escrowReclaim`. */
export function reclaim(
  log: TransitionLog,
  c: Command<'acmp/escrowReclaim'>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  // L4 §4.4: only in `open`; a bound escrow needs one release or resolved claim first.
  if (r.state !== 'open') throw escrowError('invalidState', 'not_open', { state: r.state });
  if (r.payee !== null && !r.settled) throw escrowError('invalidState', 'bound_unsettled');
  const amount = c.amount ?? remainingOf(r);
  if (amount > remainingOf(r)) throw escrowError('exceedsRemaining');
  if (amount <= 0n) throw escrowError('invalidState', 'nothing_to_reclaim');
  const reclaimed = r.reclaimed + amount;
  const state = r.released + reclaimed === r.locked ? 'closed' : 'open';
  log.step({
    kind: 'reclaim',
    actor: context.party,
    at: context.now,
    patch: { state, reclaimed },
    data: { amount_cu: formatCu(amount) },
    pay: [{ to: 'buyer', amount, kind: 'reclaim' }],
  });
  return {
    escrow_id: r.escrowId,
    reclaimed_cu: formatCu(amount),
    remaining_cu: formatCu(remainingOf(log.record)),
    state,
  };
}

/** L4 §4.5 `acmp/escrowClaim`. */
export function claim(
  log: TransitionLog,
  c: Command<'acmp/escrowClaim'>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  const { now } = context;
  // L4 §4.5: only in `open`; one pending claim at a time.
  if (r.state !== 'open') throw escrowError('invalidState', 'not_open', { state: r.state });
  if (r.claimedTasks.includes(c.taskId)) throw escrowError('invalidState', 'duplicate_claim');
  if (c.amount > remainingOf(r)) throw escrowError('exceedsRemaining');
  if (r.agreedPrice !== null && c.amount > r.agreedPrice)
    throw escrowError('exceedsRemaining', 'exceeds_agreed_price', {
      agreed_price_cu: formatCu(r.agreedPrice),
    });
  const pending = {
    amount: c.amount,
    taskId: c.taskId,
    proof: c.proof ?? null,
    filedAt: now,
    windowEndsAt: now + r.challengeWindowMs,
    signed: context.verified?.signed ?? null,
  };
  log.step({
    kind: 'claim',
    actor: context.party,
    at: now,
    patch: { state: 'claimed', claim: pending, claimedTasks: [...r.claimedTasks, c.taskId] },
    data: {
      amount_cu: formatCu(c.amount),
      task_id: c.taskId,
      proof: pending.proof,
      ...(context.verified ? { signed: context.verified.signed } : {}),
      // Ours (docs/acmp-escrow.md §9.1): the payout list this claim registers, in the escrow's log.
      ...(c.payout ? { payout: [...c.payout] } : {}),
    },
  });
  return {
    escrow_id: r.escrowId,
    state: 'claimed',
    claim: { amount_cu: formatCu(c.amount), window_ends_ms: pending.windowEndsAt },
  };
}

/** L4 §4.6 `acmp/escrowDispute`, with the resolution deadline we add so that a dispute always ends. */
export function dispute(
  log: TransitionLog,
  c: Command<'acmp/escrowDispute'>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  const { now, settings } = context;
  // L4 §4.6: only in `claimed`, before the window ends (advance() already paid a claim whose window passed).
  if (r.state !== 'claimed' || !r.claim)
    throw escrowError('invalidState', r.state === 'disputed' ? 'already_disputed' : 'not_claimed', {
      state: r.state,
    });
  const deadlineAt = now + settings.disputeDeadlineMs;
  const filed = {
    reason: c.reason,
    evidence: c.evidence ?? null,
    signed: context.verified?.signed ?? null,
    filedAt: now,
    deadlineAt,
    claim: r.claim,
    defaultOutcome: settings.defaultOutcome,
    resolution: null,
  };
  log.step({
    kind: 'dispute',
    actor: context.party,
    at: now,
    patch: { state: 'disputed', dispute: filed },
    data: {
      reason: c.reason,
      resolution_deadline_ms: deadlineAt,
      ...(context.verified ? { signed: context.verified.signed } : {}),
    },
  });
  return {
    escrow_id: r.escrowId,
    state: 'disputed',
    resolution_deadline_ms: deadlineAt,
    default_outcome: settings.defaultOutcome,
  };
}

/**
 * The challenge window: the given one within the advertised range, or the default.
 * @throws AcmpError -32602 `window_out_of_range`.
 */
export function windowOf(windowMs: number | undefined, settings: EscrowSettings): number {
  if (windowMs === undefined) return settings.defaultChallengeWindowMs;
  // Ours: a window outside the advertised range is refused (a negative one would let a claim pay at once).
  if (windowMs < settings.minChallengeWindowMs || windowMs > settings.maxChallengeWindowMs) {
    throw new AcmpError(ACMP_CODE.invalidParams, {
      reason: 'window_out_of_range',
      min_ms: settings.minChallengeWindowMs,
      max_ms: settings.maxChallengeWindowMs,
    });
  }
  return windowMs;
}

/**
 * A payee must be an authenticated identity (docs/host.md identities) or a DID, other than the buyer.
 * @throws AcmpError -32602 `payee_invalid`.
 */
export function checkPayee(payee: string, buyer: string): void {
  // Layer 7 §2: a payee may be a DID, which proves itself by signing its claims (docs/acmp-escrow.md).
  const token = isIdentity(payee) && payee !== ANONYMOUS_IDENTITY && !payee.startsWith('legacy:');
  if (!(token || isDid(payee)) || payee === buyer) {
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'payee_invalid' });
  }
}

/** The pending claim of a `claimed` escrow (the record keeps one whenever it is in that state). */
function pendingClaim(record: EscrowRecord): EscrowClaim {
  if (!record.claim) throw new LocalError('INVALID_STATE', 'claimed escrow without a pending claim');
  return record.claim;
}

function unique<T>(value: T, index: number, all: readonly T[]): boolean {
  return all.indexOf(value) === index;
}
