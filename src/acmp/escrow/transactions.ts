import type { IdSource } from '../../shared/ids.js';
import type { EscrowCaller } from './agent-types.js';
import { formatCu } from './amounts.js';
import { ESCROW_METHOD, type EscrowSettings } from './constants.js';
import { checkVerified, type VerifiedRequest } from './did-parties.js';
import { escrowError } from './errors.js';
import type { EscrowCommand, EscrowParams } from './messages.js';
import { lockResult, persist, replay, toAnswer, type Done } from './outcomes.js';
import { logOf, registerWithClaim } from './payout-config.js';
import type { EscrowRecord } from './record.js';
import { advance, applyCommand, attemptCommand, authorize, openEscrow } from './state-machine.js';
import type { EscrowStore, OpKey, StoredOp } from './store.js';

/*
 * The transactions of the agent's party operations [L4 §6]: each one is one transaction on the locked
 * escrow (or the buyer's account, for a lock) applying what time did, the operation, its op_ref record and
 * its pending payouts together. The payouts run after the commit, in the agent.
 */

/** `acmp/escrowLock` as the agent received it. */
export interface LockRequest {
  readonly caller: EscrowCaller;
  readonly command: Extract<EscrowCommand, { method: 'acmp/escrowLock' }>;
  /** The params' payload hash, compared on an op_ref retry (L4 §3). */
  readonly hash: string;
}

/** Any other party operation as the agent received it, with its verified envelope (Layer 7 §4). */
export interface OperationRequest {
  readonly caller: EscrowCaller;
  readonly command: Exclude<EscrowCommand, { method: 'acmp/escrowLock' }>;
  readonly hash: string;
  readonly params: EscrowParams;
  readonly verified: VerifiedRequest | undefined;
}

/** What a lock creates an escrow with. */
interface LockContext {
  readonly ids: IdSource;
  readonly settings: EscrowSettings;
  readonly now: number;
}

/**
 * Locks the buyer's funds into a new escrow (L4 §4.1), or replays the op_ref's stored outcome.
 * Insufficient funds are an outcome (-35002), stored for the op_ref like a result.
 */
export async function lockInTransaction(
  store: EscrowStore,
  request: LockRequest,
  context: LockContext,
): Promise<Done> {
  const { caller, command, hash } = request;
  const { now } = context;
  let created: EscrowRecord | undefined;
  const answer = await store.transaction(async (tx) => {
    // The buyer's account row is locked first, so concurrent locks with one op_ref are serial.
    const balance = await tx.account(caller.tenant, caller.party);
    const key: OpKey = {
      tenant: caller.tenant,
      party: caller.party,
      method: command.method,
      scope: 'lock',
      opRef: command.opRef,
    };
    const stored = await tx.op(key);
    if (stored) return replay(stored, hash);
    const owner = {
      escrowId: context.ids.newId('esc'),
      tenant: caller.tenant,
      buyer: caller.party,
      contextId: context.ids.newId('ctx'),
      now,
    };
    const record = openEscrow(command, owner, context.settings);
    let outcome: StoredOp['outcome'];
    if (balance < command.amount) {
      // L4 §4.1 -35002; replayed for this op_ref even after funding (L4 §3; docs/acmp-escrow.md §6 "op_ref").
      outcome = { kind: 'error', error: escrowError('insufficientFunds').toObject() };
    } else {
      await tx.insertEscrow(record);
      created = record;
      await tx.setBalance(caller.tenant, caller.party, balance - command.amount);
      await tx.addEvents([
        {
          escrowId: record.escrowId,
          seq: 0,
          kind: 'lock',
          actor: caller.party,
          at: now,
          data: { amount_cu: formatCu(command.amount) },
        },
      ]);
      outcome = { kind: 'result', result: lockResult(record) };
    }
    await tx.putOp({
      key,
      paramsHash: hash,
      outcome,
      escrowId: outcome.kind === 'result' ? record.escrowId : null,
      at: now,
    });
    return toAnswer(outcome);
  });
  return { answer, payouts: [], changed: created };
}

/**
 * Applies a party operation to its escrow: checks the caller (its verified envelope, its role), applies
 * what time did, then the command — a status read answers as it stands; any other is attempted once per
 * op_ref and replayed after.
 * @throws AcmpError -35001 for an escrow unknown to the caller's tenant; the checks' refusals.
 */
export function operateInTransaction(
  store: EscrowStore,
  request: OperationRequest,
  context: { readonly settings: EscrowSettings; readonly now: number },
): Promise<Done> {
  const { caller, command, hash, params, verified } = request;
  const { now } = context;
  return store.transaction(async (tx) => {
    const record = await tx.escrow(command.escrowId);
    if (!record || record.tenant !== caller.tenant) throw escrowError('notFound');
    checkVerified(record, { method: command.method, params, party: caller.party }, verified);
    authorize(record, command, { party: caller.party, verified });
    const log = await logOf(tx, record, command);
    advance(log, now);
    const applied = { party: caller.party, now, settings: context.settings, verified };
    if (command.method === ESCROW_METHOD.status) {
      const result = applyCommand(log, command, applied);
      return { answer: { kind: 'result', result }, ...(await persist(tx, record, log)) };
    }
    const key: OpKey = {
      tenant: caller.tenant,
      party: caller.party,
      method: command.method,
      scope: record.escrowId,
      opRef: command.opRef,
    };
    const stored = await tx.op(key);
    if (stored) return { answer: replay(stored, hash), ...(await persist(tx, record, log)) };
    const outcome = attemptCommand(log, command, applied);
    await registerWithClaim(tx, { record, command, outcome, at: now });
    const persisted = await persist(tx, record, log);
    await tx.putOp({ key, paramsHash: hash, outcome, escrowId: record.escrowId, at: now });
    return { answer: toAnswer(outcome), ...persisted };
  });
}
