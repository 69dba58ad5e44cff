import type { AgentCard } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { BuyerEscrow } from '../../src/a2a/escrow/buyer-escrow.js';
import { createEscrowClient, type EscrowClient } from '../../src/a2a/escrow/client.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { ESCROW_AGENT_ROLE, ESCROW_PROFILE_URI } from '../../src/acmp/escrow/constants.js';

/** A card advertising an escrow agent whose profile params are `params` (only what the client reads). */
function cardWithProfile(params: unknown): AgentCard {
  const extensions = [
    { uri: ACMP_EXTENSION_URI, required: false, params: { role: ESCROW_AGENT_ROLE } },
    { uri: ESCROW_PROFILE_URI, required: false, params },
  ];
  return { capabilities: { extensions } } as unknown as AgentCard;
}

/** An escrow client whose every call answers `result`. */
function answering(result: Record<string, never> | Record<string, string>): EscrowClient {
  return {
    card: cardWithProfile({}),
    profile: {},
    call: () => Promise.resolve(result),
    status: () => Promise.reject(new Error('not used')),
    watch: () => ({ [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(new Error('not used')) }) }),
  };
}

describe('escrow client: the card’s escrow profile decoded (docs/acmp-escrow.md §2 "Agent Card")', () => {
  it.each([
    ['a string', 'fast'],
    ['a list', ['fast']],
    ['an object with a non-JSON value', { at: 1n }],
  ])('refuses a profile that is %s with -33007', async (_, params) => {
    await expect(createEscrowClient({ card: cardWithProfile(params) })).rejects.toMatchObject({
      code: -33007,
      data: { detail: 'the agent card’s escrow profile is not a JSON object' },
    });
  });
});

describe('buyer escrow: the lock result decoded (L4 §4.1)', () => {
  it('rejects a lock result without escrow_id with -33099, not an undefined escrow id', async () => {
    const escrow = new BuyerEscrow(answering({ state: 'locked' }));
    await expect(escrow.lock(0.01, Date.now() + 60_000)).rejects.toMatchObject({
      code: -33099,
      data: { reason: 'escrow_lock_malformed' },
    });
  });

  it('returns the escrow id of a well-formed lock result', async () => {
    const escrow = new BuyerEscrow(answering({ escrow_id: 'esc-1', state: 'locked' }));
    expect(await escrow.lock(0.01, Date.now() + 60_000)).toBe('esc-1');
  });
});
