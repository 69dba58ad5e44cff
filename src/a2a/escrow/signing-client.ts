import { ESCROW_METHOD } from '../../acmp/escrow/constants.js';
import type { Signer } from '../../acmp/identity/signer.js';
import { withSignature } from '../../acmp/identity/signed.js';
import type { Clock } from '../../shared/clock.js';
import { decodeEscrowStatus, type EscrowClient } from './client.js';

/**
 * An escrow client whose every request carries the party's Layer 7 §4 envelope over its params as sent:
 * claims and disputes MUST be signed once the parties use DIDs (L7 §4.1), and a signed status read is
 * how an escrow agent knows a DID payee it holds no token for (docs/acmp-escrow.md "DID parties"). A
 * retry signs anew; the agent compares an op_ref's params without their envelope.
 */
export function signingEscrowClient(client: EscrowClient, signer: Signer, clock?: Clock): EscrowClient {
  const options = clock ? { clock } : {};
  const call: EscrowClient['call'] = async (method, params, callOptions) =>
    client.call(method, await withSignature(params, signer, options), callOptions);
  return {
    card: client.card,
    profile: client.profile,
    call,
    status: async (escrowId, callOptions) =>
      decodeEscrowStatus(await call(ESCROW_METHOD.status, { escrow_id: escrowId }, callOptions)),
    watch: (escrowId, callOptions) => client.watch(escrowId, callOptions),
  };
}
