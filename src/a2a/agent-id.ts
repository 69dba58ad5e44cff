import type { AgentCard } from '@a2a-js/sdk';

/**
 * How the wallet's records name an A2A agent: the URL of the first interface on its card (its name when
 * it lists none). One function for every binding's wallet client, so a spend recorded by the ACMP buyer
 * and one recorded by the escrow client name the same agent alike.
 */
export function agentIdOf(card: AgentCard): string {
  return card.supportedInterfaces[0]?.url ?? card.name;
}
