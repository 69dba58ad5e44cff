import type { AgentExtension } from '@a2a-js/sdk';
import { ESCROW_PROFILE_URI } from '../../acmp/escrow/constants.js';
import type { PayoutEntry } from '../../acmp/escrow/payout-route.js';
import type { ReservationStore } from '../../acmp/escrow/reservations.js';
import type { Signer } from '../../acmp/identity/signer.js';
import type { InvokeParams } from '../../acmp/wire/task-messages.js';
import type { AcmpCapability, EscrowVerifier } from '../../acmp/provider/provider-types.js';
import type { AcmpTaskRecord } from '../../acmp/provider/task-store.js';
import type { Clock } from '../../shared/clock.js';
import type { Logger } from '../../shared/logger.js';
import { createEscrowClient, type EscrowClient } from './client.js';
import { signingEscrowClient } from './signing-client.js';
import { EscrowSettler } from './settler.js';
import { createEscrowVerifier } from './verifier.js';

/** The escrow agent a provider trusts (docs/acmp-escrow.md §2 "Agent Card": advertised on its card). */
export interface ProviderEscrowOptions {
  /** The escrow agent's base URL. */
  agentUrl: string;
  /** This provider's bearer token at the escrow agent; its identity there is the payee id. */
  token?: string;
  /**
   * This provider's DID key, when the escrow agent accepts DID callers and no token was issued: every call
   * carries a fresh caller token (docs/acmp-identity.md "Callers identified by DID"), and the payee id is
   * the DID.
   */
  signer?: Signer;
  caCert?: string;
  /**
   * This provider's identity at the escrow agent (`agent:<name>`), or its DID (Layer 7: then every claim
   * is signed with the provider's key and the agent checks it): what buyers bind their escrow to.
   */
  payeeId: string;
  /** How long after delivering the provider waits for a release before claiming (default 60 s). */
  claimDelayMs?: number;
  /** How often the claims are looked after (default 1 s). */
  settleEveryMs?: number;
  /** Where this provider wants to be paid (Layer 7 §6.4), sent with its claims (docs/acmp-escrow.md §9.1). */
  payout?: readonly PayoutEntry[];
}

/** What the ACMP module gets: the verifier for the provider core, the card entry, and a stop. */
export interface ProviderEscrow {
  readonly verifier: EscrowVerifier;
  readonly extension: AgentExtension;
  stop(): Promise<void>;
}

/** What {@link createProviderEscrow} is given besides the options: the host's records and services. */
export interface ProviderEscrowDeps {
  reservations: ReservationStore;
  capabilities: readonly AcmpCapability[];
  task: (taskId: string) => Promise<AcmpTaskRecord | undefined>;
  /** The provider's Layer 7 signer: every request to the agent (claims, status reads) is signed with it. */
  signer?: Signer | undefined;
  clock: Clock;
  logger: Logger;
}

/**
 * The provider side of Layer 4 (docs/acmp-escrow.md "The provider side"): checks every `escrow_id` before
 * work at the configured escrow agent and claims the cost of delivered tasks the buyer did not release.
 */
export function createProviderEscrow(
  options: ProviderEscrowOptions,
  deps: ProviderEscrowDeps,
): ProviderEscrow {
  return new AgentProviderEscrow(
    {
      ...options,
      claimDelayMs: options.claimDelayMs ?? 60_000,
      settleEveryMs: options.settleEveryMs ?? 1_000,
    },
    deps,
  );
}

type ResolvedEscrowOptions = ProviderEscrowOptions & { claimDelayMs: number; settleEveryMs: number };

/** {@link ProviderEscrow} at one escrow agent: a verifier and a settler sharing one lazy connection. */
class AgentProviderEscrow implements ProviderEscrow {
  readonly verifier: EscrowVerifier;
  readonly extension: AgentExtension;
  private readonly byId: ReadonlyMap<string, AcmpCapability>;
  private readonly settler: EscrowSettler;
  private connecting: Promise<EscrowClient> | undefined;

  constructor(
    private readonly options: ResolvedEscrowOptions,
    private readonly deps: ProviderEscrowDeps,
  ) {
    const { claimDelayMs } = options;
    const agent = (): Promise<EscrowClient> => this.agent();
    this.byId = new Map(deps.capabilities.map((c) => [c.id, c]));
    this.verifier = createEscrowVerifier({
      agent,
      payeeId: options.payeeId,
      reservations: deps.reservations,
      priceOf: (params) => this.priceOf(params),
      claimDelayMs,
      clock: deps.clock,
      logger: deps.logger,
    });
    this.settler = new EscrowSettler({
      agent,
      reservations: deps.reservations,
      task: deps.task,
      claimDelayMs,
      ...(options.payout ? { payout: options.payout } : {}),
      clock: deps.clock,
      logger: deps.logger,
    });
    this.extension = {
      uri: ESCROW_PROFILE_URI,
      description: 'Escrow agents this provider accepts, and its payee id at each (docs/acmp-escrow.md)',
      required: false,
      params: {
        escrow_agents: [{ url: options.agentUrl, payee_id: options.payeeId }],
        claim_delay_ms: claimDelayMs,
      },
    };
    this.settler.start(options.settleEveryMs);
  }

  stop(): Promise<void> {
    return this.settler.stop();
  }

  /** Connected on first use (the agent may start after the provider); a failed connection is tried again. */
  private agent(): Promise<EscrowClient> {
    const { signer, clock } = this.deps;
    this.connecting ??= createEscrowClient({
      agentUrl: this.options.agentUrl,
      token: this.options.token,
      ...(this.options.signer ? { signer: this.options.signer } : {}),
      caCert: this.options.caCert,
    }).then(
      (client) => (signer ? signingEscrowClient(client, signer, clock) : client),
      (error: unknown) => {
        this.connecting = undefined;
        throw error;
      },
    );
    return this.connecting;
  }

  /** What a task costs: the capability's price, capped by the buyer's `max_price_cu`. */
  private priceOf(params: InvokeParams): number {
    const capability = this.byId.get(params.capability);
    const price =
      capability === undefined
        ? 0
        : typeof capability.price === 'number'
          ? capability.price
          : capability.price(params.input ?? { type: 'json', data: null });
    return params.max_price_cu === undefined ? price : Math.min(price, params.max_price_cu);
  }
}
