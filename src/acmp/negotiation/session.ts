import { z } from 'zod';
import { sha256Jcs } from '../../shared/jcs.js';
import type { TaskScope } from '../provider/task-store.js';
import type { Agreement } from './agreement-store.js';
import { AckSchema, OfferSchema, type Offer } from '../wire/negotiation-messages.js';

/*
 * A negotiation session (session mode, ours: docs/acmp-negotiation.md "Session mode"): one record per
 * session, changed only by compare-and-set on its version. Transport-free: the buyer's messages are kept
 * in the binding's own encoding (`request`), the provider's answers as ACMP objects.
 */

/**
 * Where a session stands. Open: `offer` (a standing offer waits for the buyer: A2A INPUT_REQUIRED),
 * `quoting` / `accepting` (the provider is answering a counter / recording an acceptance: WORKING).
 * Terminal: `accepted`, `expired` (A2A COMPLETED), `canceled` (CANCELED).
 */
export const SessionPhaseSchema = z.enum([
  'quoting',
  'offer',
  'accepting',
  'accepted',
  'expired',
  'canceled',
]);
export type SessionPhase = z.infer<typeof SessionPhaseSchema>;

/** The phases in which a session is open (it counts against `max_open_sessions`). */
const OPEN_PHASES: readonly SessionPhase[] = ['quoting', 'offer', 'accepting'];

/** A provider offer published in a session: its round, and what it answered. */
export const OfferReplySchema = z.object({
  kind: z.literal('offer'),
  offer: OfferSchema,
  round: z.int().positive(),
  /** The offer this one replaces (a revised offer). */
  supersedes: z.string().optional(),
  /** The counter was declined: the standing offer is restated unchanged. */
  declined: z.boolean().optional(),
});
export type OfferReply = z.infer<typeof OfferReplySchema>;

/** The acknowledgement of an acceptance, with the agreement's invoke window and terms hash. */
export const AckReplySchema = z.object({
  kind: z.literal('ack'),
  ack: AckSchema,
  invokeByMs: z.number(),
  termsHash: z.string(),
});
export type AckReply = z.infer<typeof AckReplySchema>;

export const SessionReplySchema = z.discriminatedUnion('kind', [OfferReplySchema, AckReplySchema]);
export type SessionReply = z.infer<typeof SessionReplySchema>;

/** One buyer message the session took and the provider's answer (absent while quoting or accepting). */
export const SessionTurnSchema = z.object({
  messageId: z.string(),
  /** JCS hash of the message's payload (idempotency: the same id with another payload is refused). */
  hash: z.string(),
  /** The buyer's message in the binding's encoding (for the task view). */
  request: z.string(),
  at: z.number(),
  reply: SessionReplySchema.optional(),
});
export type SessionTurn = z.infer<typeof SessionTurnSchema>;

/** How a session ended without an acceptance. */
export const SessionEndSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('expired'),
    at: z.number(),
    offerId: z.string(),
    reason: z.enum(['offer_expired', 'session_expired']),
  }),
  z.object({ kind: z.literal('canceled'), at: z.number() }),
]);
export type SessionEnd = z.infer<typeof SessionEndSchema>;

/** Everything of a session but its key columns, as stored in one JSON body. */
export const SessionBodySchema = z.object({
  /** `session_expires_ms`: the session ends then, whatever its standing offer says. */
  expiresAt: z.number(),
  maxRounds: z.int().positive(),
  /** The round of the standing offer (1 for the first offer; each answered counter adds one). */
  round: z.int().positive(),
  /** The price of the first offer: the reference of the provider's counter policy. */
  listPrice: z.number(),
  standing: OfferSchema,
  superseded: z.array(z.string()),
  turns: z.array(SessionTurnSchema),
  end: SessionEndSchema.optional(),
  /** The store key of the agreement an acceptance wrote. */
  agreementKey: z.string().optional(),
});
export type SessionBody = z.infer<typeof SessionBodySchema>;

/** One negotiation session. Times are Unix milliseconds. */
export interface NegotiationSession extends SessionBody {
  /** The A2A task id (server-generated, `neg_…`). */
  readonly id: string;
  readonly contextId: string;
  /** The caller that opened it: the only one that may see, resume or cancel it. */
  readonly scope: TaskScope;
  /** The message id of the opening `acmp/offerRequest` (a retry of it finds this session). */
  readonly openMessageId: string;
  /** Incremented by every change; every change is a compare-and-set on it. */
  readonly version: number;
  readonly phase: SessionPhase;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** The body of a session, for storing. */
export function sessionBody(session: NegotiationSession): SessionBody {
  const {
    id: _id,
    contextId: _c,
    scope: _s,
    openMessageId: _o,
    version: _v,
    phase: _p,
    createdAt: _ca,
    updatedAt: _u,
    ...body
  } = session;
  return body;
}

export function isOpen(session: NegotiationSession): boolean {
  return OPEN_PHASES.includes(session.phase);
}

/** Whether a session in `phase` has ended (accepted, expired or canceled). */
export function isEnded(phase: SessionPhase): phase is 'accepted' | 'expired' | 'canceled' {
  return !OPEN_PHASES.includes(phase);
}

/** How long an acceptance in progress may outlive its session before the expiry settles it. */
const ACCEPT_GRACE_MS = 5_000;

/**
 * When an open session ends by itself: at the earlier of its standing offer's `valid_until_ms` and
 * `session_expires_ms` while an offer stands; at `session_expires_ms` while the provider answers a counter
 * (plus {@link ACCEPT_GRACE_MS} while it records an acceptance). `null` for a terminal session.
 */
export function dueAt(session: NegotiationSession): number | null {
  if (!isOpen(session)) return null;
  if (session.phase === 'offer') return Math.min(session.standing.valid_until_ms, session.expiresAt);
  return session.phase === 'accepting' ? session.expiresAt + ACCEPT_GRACE_MS : session.expiresAt;
}

/** The end of a session that is due at `now`, if it is. */
export function expiryAt(session: NegotiationSession, now: number): SessionEnd | undefined {
  const due = dueAt(session);
  if (due === null || now <= due) return undefined;
  const reason =
    session.phase === 'offer' && session.standing.valid_until_ms <= session.expiresAt
      ? 'offer_expired'
      : 'session_expired';
  // The session ended when it fell due, whoever noticed it and when (every host computes the same view).
  return { kind: 'expired', at: due, offerId: session.standing.offer_id, reason };
}

/** The hash that binds an acceptance to the exact terms of an offer (`offer_hash`, docs/acmp-negotiation.md "Wire"). */
export function offerHash(offer: Offer): string {
  return sha256Jcs(offer);
}

/** The turn a buyer message id took, if any. */
export function turnOf(session: NegotiationSession, messageId: string): SessionTurn | undefined {
  return session.turns.find((t) => t.messageId === messageId);
}

/** What a new session starts from: its ids, its caller, the opening turn answered with the first offer. */
export interface SessionStart {
  readonly id: string;
  readonly contextId: string;
  readonly scope: TaskScope;
  /** The opening `acmp/offerRequest`, answered with the first offer (round 1); its time opens the session. */
  readonly turn: SessionTurn & { readonly reply: OfferReply };
  readonly maxRounds: number;
  readonly expiresAt: number;
}

/** A new session in phase `offer`, version 1, with the first offer standing. */
export function openedSession(start: SessionStart): NegotiationSession {
  const { turn } = start;
  return {
    id: start.id,
    contextId: start.contextId,
    scope: start.scope,
    openMessageId: turn.messageId,
    version: 1,
    phase: 'offer',
    createdAt: turn.at,
    updatedAt: turn.at,
    expiresAt: start.expiresAt,
    maxRounds: start.maxRounds,
    round: 1,
    listPrice: turn.reply.offer.price_cu,
    standing: turn.reply.offer,
    superseded: [],
    turns: [turn],
  };
}

/** The acknowledgement of an acceptance that wrote `agreement`, bound to the standing offer's terms. */
export function ackReplyOf(session: NegotiationSession, agreement: Agreement): AckReply {
  const ack = {
    offer_id: agreement.offerId,
    escrow_id: agreement.escrowId,
    price_cu: agreement.terms.price_cu,
  };
  return { kind: 'ack', ack, invokeByMs: agreement.invokeBy, termsHash: offerHash(session.standing) };
}

/** A buyer's turn a session takes, and the phase it is in while the provider answers it. */
export interface PendingTurn {
  readonly phase: 'quoting' | 'accepting';
  readonly turn: SessionTurn;
}

/** An acceptance as recorded: the acknowledgement and the store key of the agreement it wrote. */
export interface Acceptance {
  readonly reply: AckReply;
  readonly agreementKey: string;
}

function next(
  session: NegotiationSession,
  changes: Partial<NegotiationSession>,
  at: number,
): NegotiationSession {
  return { ...session, ...changes, version: session.version + 1, updatedAt: Math.max(at, session.updatedAt) };
}

/**
 * The transitions of the session state machine (docs/acmp-negotiation.md "State machine"); each returns
 * the next version, which the store writes by compare-and-set on the current one.
 */
export const sessionTransition = {
  /** offer → quoting (a counter) or accepting (an acceptance), with the buyer's turn pending. */
  begin(session: NegotiationSession, pending: PendingTurn, at: number): NegotiationSession {
    return next(session, { phase: pending.phase, turns: [...session.turns, pending.turn] }, at);
  },
  /** quoting → offer: the provider answered the pending counter with `reply`. */
  offered(session: NegotiationSession, reply: OfferReply, at: number): NegotiationSession {
    const superseded =
      reply.supersedes === undefined ? session.superseded : [...session.superseded, reply.supersedes];
    return next(
      session,
      {
        phase: 'offer',
        round: reply.round,
        standing: reply.offer,
        superseded,
        turns: answered(session, reply),
      },
      at,
    );
  },
  /** accepting → accepted: the agreement is recorded. */
  accepted(session: NegotiationSession, acceptance: Acceptance, at: number): NegotiationSession {
    const { reply, agreementKey } = acceptance;
    return next(session, { phase: 'accepted', agreementKey, turns: answered(session, reply) }, at);
  },
  /** quoting/accepting → offer: the pending turn was refused; the session is as it was before it. */
  restore(session: NegotiationSession, at: number): NegotiationSession {
    return next(session, { phase: 'offer', turns: session.turns.slice(0, -1) }, at);
  },
  ended(session: NegotiationSession, end: SessionEnd): NegotiationSession {
    return next(session, { phase: end.kind, end }, end.at);
  },
};

function answered(session: NegotiationSession, reply: SessionReply): SessionTurn[] {
  const turns = [...session.turns];
  const last = turns.pop();
  return last === undefined ? turns : [...turns, { ...last, reply }];
}
