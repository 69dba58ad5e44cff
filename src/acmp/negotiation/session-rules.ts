import { errorFields, type Logger } from '../../shared/logger.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { TaskScope } from '../provider/task-store.js';
import type { AcceptParams, CounterOfferParams, OfferRequestParams } from '../wire/negotiation-messages.js';
import { isOpen, offerHash, turnOf, type NegotiationSession } from './session.js';

/** A buyer message to the sessions, as the binding read it. */
export interface SessionMessage {
  readonly scope: TaskScope;
  readonly messageId: string;
  /** JCS hash of the message's payload (the ACMP part and our extension's metadata). */
  readonly hash: string;
  /** The message in the binding's encoding, once it belongs to `taskId` in `contextId` (for the view). */
  encode(taskId: string, contextId: string): string;
}

/** The opening `acmp/offerRequest` of a session. */
export interface OpenRequest extends SessionMessage {
  /** The context the buyer named, or '' for a new one. */
  readonly contextId: string;
  readonly params: OfferRequestParams;
}

/** A message resuming a session: a counter-offer or an acceptance. */
export interface ResumeRequest extends SessionMessage {
  readonly taskId: string;
  /** The context the buyer named, or '' (then the session's, A2A §3.4.3). */
  readonly contextId: string;
  readonly call:
    | { readonly method: 'counter'; readonly params: CounterOfferParams }
    | { readonly method: 'accept'; readonly params: AcceptParams; readonly offerHash?: string };
}

/**
 * What a message to a session leads to: the session to show (new, changed or replayed), a refusal that
 * leaves it untouched (an agent message with `{acmp_error}`), or the A2A errors: unknown to this caller
 * (-32001) and terminal (-32004).
 */
export type SessionOutcome =
  | { readonly kind: 'session'; readonly session: NegotiationSession }
  | { readonly kind: 'refused'; readonly error: AcmpError }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'terminal'; readonly session: NegotiationSession };

/** The verdict on a resume before any write: an outcome, `proceed` to the transition, or `finish` a pending acceptance. */
export type Verdict = SessionOutcome | { readonly kind: 'proceed' } | { readonly kind: 'finish_accept' };

/** A refusal of a session message with -34001 and a reason (docs/acmp-negotiation.md "Decisions": no new codes). */
export function sessionRefusal(reason: string, data: Record<string, unknown> = {}): SessionOutcome {
  return { kind: 'refused', error: new AcmpError(ACMP_CODE.offerNotFound, { ...data, reason }) };
}

/**
 * Judges a resume against the session as it stands (docs/acmp-negotiation.md "State machine"), in this
 * order: a message id the session took before is replayed (same payload) or refused -32602 (another
 * payload); a terminal session refuses new messages (-32004); the context must match (-32602); the buyer
 * speaks only while an offer stands (-34001 `not_your_turn`); only the standing offer can be countered or
 * accepted (-34001 `superseded` or `not_in_session`); counters are limited (-34001 `max_rounds`); an
 * acceptance's `offer_hash` must be the standing offer's (-32602 `offer_hash_mismatch`).
 */
export function judgeResume(session: NegotiationSession, request: ResumeRequest): Verdict {
  const turn = turnOf(session, request.messageId);
  if (turn) {
    if (turn.hash !== request.hash) return invalid('message_id_reused');
    const pendingAccept =
      session.phase === 'accepting' && turn.reply === undefined && request.call.method === 'accept';
    return pendingAccept ? { kind: 'finish_accept' } : { kind: 'session', session };
  }
  if (!isOpen(session)) return { kind: 'terminal', session };
  if (request.contextId !== '' && request.contextId !== session.contextId) return invalid('context_mismatch');
  if (session.phase !== 'offer') return sessionRefusal('not_your_turn');
  const offerId = request.call.params.offer_id;
  if (offerId !== session.standing.offer_id)
    return sessionRefusal(session.superseded.includes(offerId) ? 'superseded' : 'not_in_session');
  if (request.call.method === 'counter' && session.round >= session.maxRounds)
    return sessionRefusal('max_rounds', { max_rounds: session.maxRounds });
  if (
    request.call.method === 'accept' &&
    request.call.offerHash !== undefined &&
    request.call.offerHash !== offerHash(session.standing)
  ) {
    return invalid('offer_hash_mismatch');
  }
  return { kind: 'proceed' };
}

function invalid(reason: string): SessionOutcome {
  return { kind: 'refused', error: new AcmpError(ACMP_CODE.invalidParams, { reason }) };
}

/** A session message refused: an ACMP error as it is, anything else -32603 with its cause logged. */
export function refused(error: unknown, logger?: Logger): SessionOutcome {
  if (error instanceof AcmpError) {
    // A refusal made of a capability's own error (a price that cannot be quoted): the cause is logged.
    if (error.cause !== undefined)
      logger?.warn('acmp.session_refused', { code: error.code, ...errorFields(error.cause) });
    return { kind: 'refused', error };
  }
  logger?.error('acmp.session_failed', errorFields(error));
  return { kind: 'refused', error: new AcmpError(ACMP_CODE.internal) };
}
