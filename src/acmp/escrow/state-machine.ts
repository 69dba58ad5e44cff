import { ANONYMOUS_IDENTITY } from '../../shared/identity.js';
import type { JsonValue } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { formatCu } from './amounts.js';
import {
  bind,
  checkPayee,
  claim,
  dispute,
  reclaim,
  release,
  windowOf,
  type CommandContext,
} from './commands.js';
import { ESCROW_METHOD, type EscrowSettings } from './constants.js';
import { isDid, type VerifiedRequest } from './did-parties.js';
import { escrowError } from './errors.js';
import type { EscrowCommand, MutatingCommand } from './messages.js';
import { encodeStatus, remainingOf, type EscrowClaim, type EscrowRecord } from './record.js';
import type { StoredOp } from './store.js';
import { TransitionLog } from './transitions.js';

export type { CommandContext } from './commands.js';

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
  // A buyer authenticated as a DID is that DID; it cannot name another (docs/acmp-escrow.md "DID parties").
  if (isDid(owner.buyer) && lock.buyerDid !== null && lock.buyerDid !== owner.buyer)
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'buyer_did_mismatch' });
  return {
    escrowId: owner.escrowId,
    tenant: owner.tenant,
    buyer: owner.buyer,
    buyerDid: isDid(owner.buyer) ? owner.buyer : lock.buyerDid,
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
    payeeRoute: null,
    createdAt: owner.now,
    updatedAt: owner.now,
  };
}

/**
 * Authority [L4 §1]: bind, release, reclaim and dispute only from the buyer; claim only from the bound
 * payee (a DID payee: the signer of a verified request); status only from either. An anonymous caller is
 * never a party.
 * @throws AcmpError -35005.
 */
export function authorize(
  record: EscrowRecord,
  command: EscrowCommand,
  caller: { readonly party: string; readonly verified?: VerifiedRequest | undefined },
): void {
  const { party, verified } = caller;
  const isBuyer = party === record.buyer;
  // Layer 7 §3/§4: a DID payee is whoever signs as that DID (checked against the bound DID, did-parties.ts).
  const isPayee =
    record.payee !== null &&
    (party === record.payee || (isDid(record.payee) && verified?.did === record.payee));
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
      autoRelease(log, r.claim);
    } else if (r.state === 'disputed' && r.dispute && now >= r.dispute.deadlineAt) {
      const toPayee = r.dispute.defaultOutcome === 'pay_claim' ? r.dispute.claim.amount : 0n;
      resolveDispute(log, { toPayee, by: 'default', actor: 'agent', at: r.dispute.deadlineAt });
    } else if (r.state === 'open' && now >= r.validUntil) {
      const remaining = remainingOf(r);
      // L4 §2: MUST auto-reclaim to the buyer; the expiry happens at valid_until_ms, whenever it is noticed.
      const at = Math.max(r.validUntil, r.updatedAt);
      log.step({
        kind: 'expire',
        actor: 'agent',
        at,
        patch: { state: 'closed', reclaimed: r.reclaimed + remaining, expired: true },
        data: { reclaimed_cu: formatCu(remaining) },
        pay: [{ to: 'buyer', amount: remaining, kind: 'expiry' }],
      });
    } else return;
  }
}

/** Pays the pending `claim` at the end of its window. */
function autoRelease(log: TransitionLog, claim: EscrowClaim): void {
  const r = log.record;
  const released = r.released + claim.amount;
  // L4 §4.5: the agent MUST auto-release the claimed amount when the window passes without a dispute.
  log.step({
    kind: 'auto_release',
    actor: 'agent',
    at: claim.windowEndsAt,
    patch: {
      state: released + r.reclaimed === r.locked ? 'closed' : 'open',
      released,
      claim: null,
      settled: true,
    },
    data: { amount_cu: formatCu(claim.amount), task_id: claim.taskId },
    pay: [{ to: 'payee', amount: claim.amount, kind: 'auto_release' }],
  });
}

/** How a dispute ends: who decided (`actor`, by operator or the advertised default), when, and the payee's share. */
export interface DisputeDecision {
  /** At most the disputed claim; the rest of the remaining balance goes to the buyer. */
  readonly toPayee: bigint;
  readonly by: 'operator' | 'default';
  readonly actor: string;
  readonly at: number;
}

/**
 * Ends a dispute: `toPayee` (at most the disputed claim) to the payee, the rest of the remaining balance to
 * the buyer; the escrow closes [L4 §4.6].
 * @throws AcmpError -35003 when the escrow is not disputed; -32602 when `toPayee` exceeds the claim.
 */
export function resolveDispute(log: TransitionLog, decision: DisputeDecision): void {
  const { toPayee, by, actor, at } = decision;
  const r = log.record;
  if (r.state !== 'disputed' || !r.dispute)
    throw escrowError('invalidState', 'not_disputed', { state: r.state });
  if (toPayee < 0n || toPayee > r.dispute.claim.amount)
    throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'exceeds_claim' });
  const toBuyer = remainingOf(r) - toPayee;
  const resolution = { toPayee, toBuyer, by, at };
  log.step({
    kind: 'resolve',
    actor,
    at,
    patch: {
      state: 'closed',
      released: r.released + toPayee,
      reclaimed: r.reclaimed + toBuyer,
      claim: null,
      settled: true,
      dispute: { ...r.dispute, resolution },
    },
    data: { to_payee_cu: formatCu(toPayee), to_buyer_cu: formatCu(toBuyer), by },
    pay: [
      { to: 'payee', amount: toPayee, kind: 'resolution' },
      { to: 'buyer', amount: toBuyer, kind: 'resolution' },
    ],
  });
}

/**
 * Applies one authorised command to an advanced record [L4 §4.2–§4.7] and returns its result object.
 * @throws AcmpError -35003 / -35004 / -35006 / -35005 / -32602 as the method's rules say.
 */
export function applyCommand(
  log: TransitionLog,
  command: MutatingCommand | Extract<EscrowCommand, { method: typeof ESCROW_METHOD.status }>,
  context: CommandContext,
): Record<string, JsonValue> {
  const r = log.record;
  // The reader is the payee when its bearer identity is, or when it signed as the payee's DID (L7 §4).
  if (command.method === ESCROW_METHOD.status) return encodeStatus(r, context.verified?.did ?? context.party);
  // L4 §5 -35004: an escrow that expired (and was auto-reclaimed) takes no further operation.
  if (r.expired) throw escrowError('expired');
  switch (command.method) {
    case ESCROW_METHOD.lock:
      throw escrowError('invalidState', 'lock_on_escrow');
    case ESCROW_METHOD.bind:
      return bind(log, command, context);
    case ESCROW_METHOD.release:
      return release(log, command, context);
    case ESCROW_METHOD.reclaim:
      return reclaim(log, command, context);
    case ESCROW_METHOD.claim:
      return claim(log, command, context);
    case ESCROW_METHOD.dispute:
      return dispute(log, command, context);
  }
}

/** Outcomes the agent remembers per op_ref [L4 §3]: those that depend on the escrow's or account's state. */
const REPLAYED_CODES = new Set([-35002, -35003, -35004, -35006]);

/**
 * Applies a command; a state-dependent refusal becomes the remembered outcome, anything else is thrown
 * (the transaction rolls back).
 */
export function attemptCommand(
  log: TransitionLog,
  command: MutatingCommand,
  context: CommandContext,
): StoredOp['outcome'] {
  try {
    return { kind: 'result', result: applyCommand(log, command, context) };
  } catch (error) {
    if (error instanceof AcmpError && REPLAYED_CODES.has(error.code))
      return { kind: 'error', error: error.toObject() };
    throw error;
  }
}
