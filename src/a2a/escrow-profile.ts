import type { AgentCard } from '@a2a-js/sdk';
import { ESCROW_PROFILE_URI } from '../acmp/escrow/constants.js';
import { isJsonObject } from '../shared/json.js';

/*
 * A provider card's escrow profile as a buyer reads it. The provider writes it (src/a2a/escrow/), the ACMP
 * buyer reads it (src/a2a/acmp/): a neutral piece of the card, so neither binding reaches the other.
 */

/** An escrow agent a provider accepts, and the provider's payee id there (its card's escrow profile). */
export interface AcceptedEscrowAgent {
  readonly url: string;
  readonly payeeId: string;
}

/** The escrow agents a provider's card lists (docs/acmp-escrow.md §2 "Agent Card"); empty when it lists none. */
export function acceptedEscrowAgents(card: AgentCard): AcceptedEscrowAgent[] {
  const params = card.capabilities?.extensions.find((e) => e.uri === ESCROW_PROFILE_URI)?.params;
  const agents = isJsonObject(params) && Array.isArray(params.escrow_agents) ? params.escrow_agents : [];
  return agents.flatMap((a: unknown) =>
    isJsonObject(a) && typeof a.url === 'string' && typeof a.payee_id === 'string'
      ? [{ url: a.url, payeeId: a.payee_id }]
      : [],
  );
}
