import { ANONYMOUS_IDENTITY, isIdentity } from '../../shared/identity.js';
import type { JsonValue } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../errors.js';
import { formatCu } from './amounts.js';
import { ESCROW_METHOD, type EscrowSettings } from './constants.js';
import { escrowError } from './errors.js';
import type { EscrowCommand, MutatingCommand } from './messages.js';
import { encodeStatus, remainingOf, type EscrowRecord } from './record.js';
import { TransitionLog, type Transitions } from './transitions.js';

/**
 * The Layer 4 state machine [L4 §2, §4], pure: no I/O, no clock of its own. The agent runs it inside one
 * store transaction per operation, on the record it holds locked.
 */

type Lock = Extract<EscrowCommand, { method: typeof ESCROW_METHOD.lock }>;

/** Who a new escrow belongs to and where its task view lives. */
export interface NewEscrow {
  readonly escrowId: string;
  readonly tenant: string;
  readonly buyer: string;
  readonly contextId: string;
  readonly now: number;
}

/**
 * The record a funded lock creates [L4 §4.1].
 * @throws AcmpError -32602 `valid_until_past`, `window_out_of_range`, `payee_invalid`.
 */
export function openEscrow(lock: Lock, owner: NewEscrow, settings: EscrowSettings): EscrowRecord {
  // Ours (L4 is silent, REF accepts born-expired escrows): the validity must lie in the future.
  if (lock.validUntil <= owner.now)
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'valid_until_past' });
  if (lock.payee !== null) checkPayee(lock.payee, owner.buyer);
  return {
    escrowId: owner.escrowId,
    tenant: owner.tenant,
    buyer: owner.buyer,
    payee: lock.payee,
    contextId: owner.contextId,
    state: 'open',
    locked: lock.amount,
    released: 0n,
    reclaimed: 0n,
    validUntil: lock.validUntil,
    challengeWindowMs: windowOf(lock.windowMs, settings),
    agreedPrice: null,
    tier: lock.tier,
    claim: null,
    dispute: null,
    claimedTasks: [],
    settled: false,
    expired: false,
    seq: 0,
    createdAt: owner.now,
    updatedAt: owner.now,
  };
}

/**
 * Authority [L4 §1]: bind, release, reclaim and dispute only from the buyer; claim only from the bound
 * payee; status only from either. An anonymous caller is never a party.
 * @throws AcmpError -35005.
 */
export function authorize(record: EscrowRecord, command: EscrowCommand, party: string): void {
  const isBuyer = party === record.buyer;
  const isPayee = record.payee !== null && party === record.payee;
  const allowed =
    party !== ANONYMOUS_IDENTITY &&
    (command.method === ESCROW_METHOD.claim
      ? isPayee
      : command.method === ESCROW_METHOD.status
        ? isBuyer || isPayee
        : isBuyer);
  if (!allowed) throw escrowError('notAuthorized', isBuyer || isPayee ? 'wrong_party' : 'not_a_party');
}

/**
 * Applies what time did since the last access [L4 §2, §4.5]: an unchallenged claim auto-releases at the
 * end of its window; a dispute past its deadline gets the advertised default outcome (ours); an open
 * escrow past `valid_until_ms` is auto-reclaimed to the buyer and closed. A claim or dispute suspends
 * expiry: expiry is only checked once the escrow is open again.
 */
export function advance(log: TransitionLog, now: number): void {
  for (;;) {
    const r = log.record;
    if (r.state === 'claimed' && r.claim && now >= r.claim.windowEndsAt) {
      autoRelease(log, r.claim.windowEndsAt);
    } else if (r.state === 'disputed' && r.dispute && now >= r.dispute.deadlineAt) {
      const toPayee = r.dispute.defaultOutcome === 'pay_claim' ? r.dispute.claim.amount : 0n;
      resolveDispute(log, toPayee, 'default', 'agent', r.dispute.deadlineAt);
    } else if (r.state === 'open' && now >= r.validUntil) {
      const remaining = remainingOf(r);
      // L4 §2: MUST auto-reclaim to the buyer; the expiry happens at valid_until_ms, whenever it is noticed.
      const at = Math.max(r.validUntil, r.updatedAt);
      log.step(
        'expire',
        'agent',
        at,
        { state: 'closed', reclaimed: r.reclaimed + remaining, expired: true },
        { reclaimed_cu: formatCu(remaining) },
        [{ to: 'buyer', amount: remaining, kind: 'expiry' }],
      );
    } else return;
  }
}

function autoRelease(log: TransitionLog, at: number): void {
  const r = log.record;
  const claim = r.claim!;
  const released = r.released + claim.amount;
  // L4 §4.5: the agent MUST auto-release the claimed amount when the window passes without a dispute.
  log.step(
    'auto_release',
    'agent',
    at,
    { state: released + r.reclaimed === r.locked ? 'closed' : 'open', released, claim: null, settled: true },
    { amount_cu: formatCu(claim.amount), task_id: claim.taskId },
    [{ to: 'payee', amount: claim.amount, kind: 'auto_release' }],
  );
}

/**
 * Ends a dispute: `toPayee` (at most the disputed claim) to the payee, the rest of the remaining balance to
 * the buyer; the escrow closes [L4 §4.6].
 * @throws AcmpError -35003 when the escrow is not disputed; -32602 when `toPayee` exceeds the claim.
 */
export function resolveDispute(
  log: TransitionLog,
  toPayee: bigint,
  by: 'operator' | 'default',
  actor: string,
  at: number,
): void {
  const r = log.record;
  if (r.state !== 'disputed' || !r.dispute)
    throw escrowError('invalidState', 'not_disputed', { state: r.state });
  if (toPayee < 0n || toPayee > r.dispute.claim.amount)
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'exceeds_claim' });
  const toBuyer = remainingOf(r) - toPayee;
  const resolution = { toPayee, toBuyer, by, at };
  log.step(
    'resolve',
    actor,
    at,
    {
      state: 'closed',
      released: r.released + toPayee,
      reclaimed: r.reclaimed + toBuyer,
      claim: null,
      settled: true,
      dispute: { ...r.dispute, resolution },
    },
    { to_payee_cu: formatCu(toPayee), to_buyer_cu: formatCu(toBuyer), by },
    [
      { to: 'payee', amount: toPayee, kind: 'resolution' },
      { to: 'buyer', amount: toBuyer, kind: 'resolution' },
    ],
  );
}

/**
 * Applies one authorised command to an advanced record [L4 §4.2–§4.7] and returns its result object.
 * @throws AcmpError -35003 / -35004 / -35006 / -35005 / -32602 as the method's rules say.
 */
export function applyCommand(
  log: TransitionLog,
  command: MutatingCommand | Extract<EscrowCommand, { method: typeof ESCROW_METHOD.status }>,
  party: string,
  now: number,
  settings: EscrowSettings,
): Record<string, JsonValue> {
  const r = log.record;
  if (command.method === ESCROW_METHOD.status) return encodeStatus(r);
  // L4 §5 -35004: an escrow that expired (and was auto-reclaimed) takes no further operation.
  if (r.expired) throw escrowError('expired');
  switch (command.method) {
    case ESCROW_METHOD.lock:
      throw escrowError('invalidState', 'lock_on_escrow');
    case ESCROW_METHOD.bind:
      return bind(log, command, party, now, settings);
    case ESCROW_METHOD.release:
      return release(log, command, party, now);
    case ESCROW_METHOD.reclaim:
      return reclaim(log, command, party, now);
    case ESCROW_METHOD.claim:
      return claim(log, command, party, now);
    case ESCROW_METHOD.dispute:
      return dispute(log, command, party, now, settings);
  }
}

function bind(
  log: TransitionLog,
  c: Extract<MutatingCommand, { method: 'acmp/escrowBind' }>,
  party: string,
  now: number,
  settings: EscrowSettings,
): Record<string, JsonValue> {
  const r = log.record;
  // L4 §4.2: bind happens once; a rebind (also after a payee named at lock) is -35003.
  if (r.payee !== null) throw escrowError('invalidState', 'already_bound');
  if (r.state !== 'open') throw escrowError('invalidState', 'not_open', { state: r.state });
  checkPayee(c.payee, r.buyer);
  const windowMs = c.windowMs === undefined ? r.challengeWindowMs : windowOf(c.windowMs, settings);
  if (c.agreedPrice !== null && c.agreedPrice > remainingOf(r))
    throw escrowError('exceedsRemaining', 'agreed_price_above_remaining');
  log.step(
    'bind',
    party,
    now,
    { payee: c.payee, challengeWindowMs: windowMs, agreedPrice: c.agreedPrice },
    { payee_id: c.payee, challenge_window_ms: windowMs },
  );
  return {
    escrow_id: r.escrowId,
    payee_id: c.payee,
    challenge_window_ms: windowMs,
    ...(c.agreedPrice === null ? {} : { agreed_price_cu: formatCu(c.agreedPrice) }),
  };
}

function release(
  log: TransitionLog,
  c: Extract<MutatingCommand, { method: 'acmp/escrowRelease' }>,
  party: string,
  now: number,
): Record<string, JsonValue> {
  const r = log.record;
  if (r.state !== 'open' && r.state !== 'claimed')
    throw escrowError('invalidState', 'not_open', { state: r.state });
  // L4 §4.3: payee_id MUST equal the bound payee (an unbound escrow is bound implicitly).
  if (r.payee !== null && c.payee !== r.payee) throw escrowError('notAuthorized', 'payee_mismatch');
  if (r.payee === null) checkPayee(c.payee, r.buyer);
  if (c.amount > remainingOf(r)) throw escrowError('exceedsRemaining');
  // L4 §4.3: in `claimed`, only a release of at least the claim resolves it ("must dispute, not undercut").
  if (r.state === 'claimed' && c.amount < r.claim!.amount)
    throw escrowError('invalidState', 'below_claim', { claim_cu: formatCu(r.claim!.amount) });
  const released = r.released + c.amount;
  const claimedTasks = r.claim ? [...r.claimedTasks, r.claim.taskId].filter(unique) : r.claimedTasks;
  const state = released + r.reclaimed === r.locked ? 'closed' : 'open';
  const data = { amount_cu: formatCu(c.amount), task_id: c.taskId, proof: (c.proof ?? null) as JsonValue };
  log.step(
    'release',
    party,
    now,
    { payee: c.payee, state, released, claim: null, claimedTasks, settled: true },
    data,
    [{ to: 'payee', amount: c.amount, kind: 'release' }],
  );
  return {
    escrow_id: r.escrowId,
    released_cu: formatCu(c.amount),
    remaining_cu: formatCu(remainingOf(log.record)),
    state,
  };
}

function reclaim(
  log: TransitionLog,
  c: Extract<MutatingCommand, { method: 'acmp/escrowReclaim' }>,
  party: string,
  now: number,
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
  log.step('reclaim', party, now, { state, reclaimed }, { amount_cu: formatCu(amount) }, [
    { to: 'buyer', amount, kind: 'reclaim' },
  ]);
  return {
    escrow_id: r.escrowId,
    reclaimed_cu: formatCu(amount),
    remaining_cu: formatCu(remainingOf(log.record)),
    state,
  };
}

function claim(
  log: TransitionLog,
  c: Extract<MutatingCommand, { method: 'acmp/escrowClaim' }>,
  party: string,
  now: number,
): Record<string, JsonValue> {
  const r = log.record;
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
    proof: (c.proof ?? null) as JsonValue,
    filedAt: now,
    windowEndsAt: now + r.challengeWindowMs,
  };
  log.step(
    'claim',
    party,
    now,
    { state: 'claimed', claim: pending, claimedTasks: [...r.claimedTasks, c.taskId] },
    { amount_cu: formatCu(c.amount), task_id: c.taskId, proof: pending.proof },
  );
  return {
    escrow_id: r.escrowId,
    state: 'claimed',
    claim: { amount_cu: formatCu(c.amount), window_ends_ms: pending.windowEndsAt },
  };
}

function dispute(
  log: TransitionLog,
  c: Extract<MutatingCommand, { method: 'acmp/escrowDispute' }>,
  party: string,
  now: number,
  settings: EscrowSettings,
): Record<string, JsonValue> {
  const r = log.record;
  // L4 §4.6: only in `claimed`, before the window ends (advance() already paid a claim whose window passed).
  if (r.state !== 'claimed' || !r.claim)
    throw escrowError('invalidState', r.state === 'disputed' ? 'already_disputed' : 'not_claimed', {
      state: r.state,
    });
  const deadlineAt = now + settings.disputeDeadlineMs;
  const filed = {
    reason: c.reason,
    evidence: (c.evidence ?? null) as JsonValue,
    filedAt: now,
    deadlineAt,
    claim: r.claim,
    defaultOutcome: settings.defaultOutcome,
    resolution: null,
  };
  log.step(
    'dispute',
    party,
    now,
    { state: 'disputed', dispute: filed },
    { reason: c.reason, resolution_deadline_ms: deadlineAt },
  );
  return {
    escrow_id: r.escrowId,
    state: 'disputed',
    resolution_deadline_ms: deadlineAt,
    default_outcome: settings.defaultOutcome,
  };
}

/** The challenge window: the given one within the advertised range, or the default. */
function windowOf(windowMs: number | undefined, settings: EscrowSettings): number {
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

/** A payee must be an authenticated identity other than the buyer (docs/host.md identities). */
function checkPayee(payee: string, buyer: string): void {
  if (!isIdentity(payee) || payee === ANONYMOUS_IDENTITY || payee.startsWith('legacy:') || payee === buyer) {
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'payee_invalid' });
  }
}

function unique<T>(value: T, index: number, all: readonly T[]): boolean {
  return all.indexOf(value) === index;
}

/** Runs `advance` and returns the transitions of one record (for the scheduler and tests). */
export function advanced(record: EscrowRecord, now: number): Transitions {
  const log = new TransitionLog(record);
  advance(log, now);
  return log.result();
}
