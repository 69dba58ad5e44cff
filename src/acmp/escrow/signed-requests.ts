import type { DidResolver } from '../identity/verify.js';
import type { EscrowCaller } from './agent.js';
import { ESCROW_METHOD } from './constants.js';
import { verifyRequest, type VerifiedRequest } from './did-parties.js';
import { escrowError } from './errors.js';
import type { EscrowCommand, EscrowParams } from './messages.js';
import { authorize } from './state-machine.js';
import type { EscrowStore } from './store.js';

/**
 * Layer 7 §4.1: the envelope of a request to a DID-bound escrow, verified against the bound DID before
 * the escrow is locked for the operation (resolving a DID may take a fetch). The parties are read first,
 * so nobody but the buyer makes the agent resolve a buyer's DID; the transaction then checks that the
 * record still binds the DID verified (`checkVerified`).
 * @throws AcmpError -35001, -35005, -36003, -36002.
 */
export async function verifyBeforeLock(
  agent: { store: EscrowStore; resolver: DidResolver; now: number },
  request: {
    caller: EscrowCaller;
    command: Exclude<EscrowCommand, { method: typeof ESCROW_METHOD.lock }>;
    params: EscrowParams;
  },
): Promise<VerifiedRequest | undefined> {
  const { caller, command, params } = request;
  const record = await agent.store.get(command.escrowId);
  if (!record || record.tenant !== caller.tenant) throw escrowError('notFound');
  if (command.method === ESCROW_METHOD.dispute) authorize(record, command, { party: caller.party });
  return verifyRequest(record, { method: command.method, params, party: caller.party }, agent);
}
