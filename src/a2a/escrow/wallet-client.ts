import type { AgentCard } from '@a2a-js/sdk';
import type { EscrowMethod } from '../../acmp/escrow/constants.js';
import type { JsonValue } from '../../shared/json.js';
import { guardedEscrowCall, recoverEscrowOperations, type Replay } from '../../wallet/escrow-guard.js';
import type { Wallet } from '../../wallet/wallet.js';
import { agentIdOf } from '../agent-id.js';
import type { EscrowClient, EscrowStatus } from './client.js';

/**
 * An escrow client whose every mutating call passes through the wallet (docs/acmp-wallet.md): the inner
 * client is private, so code holding this one cannot send around the wallet. Before it is returned, the
 * wallet's operations left pending at this agent by a crash are replayed (Layer 7 §6.5).
 */
export async function walletEscrowClient(
  client: EscrowClient,
  wallet: Wallet,
  options: { signal?: AbortSignal } = {},
): Promise<EscrowClient & { readonly recovered: readonly Replay[] }> {
  const agent = agentIdOf(client.card);
  const recovered = await recoverEscrowOperations(wallet, { agent, caller: client }, options);
  return new WalletEscrowClient(client, wallet, recovered);
}

class WalletEscrowClient implements EscrowClient {
  readonly #inner: EscrowClient;
  readonly #wallet: Wallet;
  readonly card: AgentCard;
  readonly profile: Record<string, unknown>;

  constructor(
    inner: EscrowClient,
    wallet: Wallet,
    readonly recovered: readonly Replay[],
  ) {
    this.#inner = inner;
    this.#wallet = wallet;
    this.card = inner.card;
    this.profile = inner.profile;
    Object.freeze(this);
  }

  call(
    method: EscrowMethod,
    params: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<Record<string, JsonValue>> {
    return guardedEscrowCall(
      this.#wallet,
      { agent: agentIdOf(this.card), caller: this.#inner },
      { method, params, ...(options?.signal ? { signal: options.signal } : {}) },
    );
  }

  status(escrowId: string, options?: { signal?: AbortSignal }): Promise<EscrowStatus> {
    return this.#inner.status(escrowId, options);
  }

  watch(escrowId: string, options?: { signal?: AbortSignal }): AsyncIterable<EscrowStatus> {
    return this.#inner.watch(escrowId, options);
  }
}
