import { createAcmpBinding, type AcmpBinding } from '../../a2a/acmp/provider-binding.js';
import {
  createProviderEscrow,
  type ProviderEscrow,
  type ProviderEscrowOptions,
} from '../../a2a/escrow/provider-escrow.js';
import { currentSignerOf, identityOfSigner, type PartyIdentity } from '../../acmp/identity/host-identity.js';
import type { Signer } from '../../acmp/identity/signer.js';
import type { ReservationStore } from '../../acmp/escrow/reservations.js';
import { MemoryAcmpTaskStore } from '../../acmp/provider/memory-task-store.js';
import { createAcmpProvider, type AcmpProviderOptions } from '../../acmp/provider/provider.js';
import type { AcmpProvider } from '../../acmp/provider/provider-types.js';
import type { AcmpTaskStore } from '../../acmp/provider/task-store.js';
import { createAcmpMcpContribution } from '../../mcp/provider-server.js';
import {
  ACMP_OWNER_COLUMNS,
  acmpMigrations,
  KyselyAcmpTaskStore,
} from '../../storage/acmp/acmp-task-store-kysely.js';
import { acmpEscrowMigrations, KyselyReservationStore } from '../../storage/escrow/escrow-reservations.js';
import { MemoryReservationStore } from '../../storage/memory/escrow-reservations-memory.js';
import type { MigrationSet } from '../../storage/sql/migrations.js';
import type { HostModule, ModuleContext, ModuleParts } from '../module.js';
import { AcmpNegotiation, type NegotiationModuleOptions, type StartedSessions } from './acmp-negotiation.js';

export type { SessionModuleOptions } from './acmp-negotiation.js';

const SHUTDOWN_GRACE_MS = 5_000;
const FINAL_SAVE_MS = 2_000;

/** Options of the ACMP module: the provider definition, minus what the host supplies (store, clock, ids). */
export type AcmpModuleOptions = Omit<
  AcmpProviderOptions,
  'store' | 'clock' | 'ids' | 'logger' | 'negotiation'
> & {
  /** The card extension's `required` flag (default false). */
  required?: boolean;
  /**
   * Serve Layer 6 negotiation (offerRequest / accept); agreements live in the host database. `sessions`
   * adds session mode (counter-offers in one A2A task) next to the flat mode.
   */
  negotiation?: boolean | NegotiationModuleOptions;
  /** Check every `escrow_id` at this escrow agent and claim unreleased costs (docs/acmp-escrow.md). */
  escrowAgent?: ProviderEscrowOptions;
};

/**
 * ACMP as a host module: the provider core over the host's database (idempotency survives restarts and is
 * shared by every host on one PostgreSQL), exposed through the A2A binding and, from the same provider and
 * records, MCP (Streamable HTTP at /mcp, and stdio; docs/acmp-mcp-binding.md).
 */
export function acmpModule(options: AcmpModuleOptions): HostModule {
  return new AcmpModule(options);
}

/** The ACMP task store for the host's dialect: over the host database when there is one, in memory otherwise. */
export function acmpTaskStoreOf(
  context: Pick<ModuleContext, 'database' | 'logger' | 'metrics'>,
): KyselyAcmpTaskStore | MemoryAcmpTaskStore {
  return context.database
    ? new KyselyAcmpTaskStore(context.database, {
        logger: context.logger,
        ...(context.metrics ? { metrics: context.metrics } : {}),
      })
    : new MemoryAcmpTaskStore();
}

/** The store of escrow reservations for the host's dialect (one escrow backs one task). */
export function reservationStoreOf(context: Pick<ModuleContext, 'database'>): ReservationStore {
  return context.database ? new KyselyReservationStore(context.database) : new MemoryReservationStore();
}

/** What one start of the module holds, closed again by {@link RunningAcmpModule.close}. */
interface AcmpHeld {
  readonly store: AcmpTaskStore;
  readonly escrow: ProviderEscrow | undefined;
  readonly provider: AcmpProvider;
  readonly sessions: StartedSessions | undefined;
  readonly binding: AcmpBinding;
}

/** The ACMP module: its tables, and each start step building one part over the host's context. */
class AcmpModule implements HostModule {
  readonly name = 'acmp';
  readonly migrations: readonly MigrationSet[];
  readonly ownerColumns = ACMP_OWNER_COLUMNS;
  readonly aliases: readonly string[];

  constructor(private readonly options: AcmpModuleOptions) {
    this.migrations = [acmpMigrations, ...(options.escrowAgent ? [acmpEscrowMigrations] : [])];
    this.aliases = options.providerId !== undefined ? [options.providerId] : [];
  }

  async start(context: ModuleContext): Promise<ModuleParts> {
    const store = acmpTaskStoreOf(context);
    // Signals must flow before the first task is followed (PostgreSQL LISTEN).
    if (store instanceof KyselyAcmpTaskStore) await store.open();
    const escrow = this.escrow(context, store);
    const { negotiation } = this.options;
    // Layer 7 §4.1: offers of both modes are signed with the provider's key (the module's own, or the host's).
    const signer = this.signerOf(context);
    const negotiating = negotiation
      ? new AcmpNegotiation(context, {
          ...(negotiation === true ? {} : negotiation),
          ...(signer ? { signer } : {}),
        })
      : undefined;
    const provider = this.provider(context, { store, escrow, negotiating });
    const sessions = await negotiating?.startSessions(this.options.capabilities);
    const binding = this.binding(context, provider, { escrow, sessions });
    // ACMP's MCP methods, from the same provider and records, on the host's MCP server (/mcp and stdio).
    context.mcp?.add(
      createAcmpMcpContribution({
        provider,
        stopping: context.stopping,
        ids: context.ids,
        logger: context.logger,
      }),
    );
    return new RunningAcmpModule({ store, escrow, provider, sessions, binding });
  }

  /** The provider's Layer 7 identity: its own `signer` when given, else the host's key (docs/acmp-identity.md). */
  private identityOf(context: ModuleContext): PartyIdentity | undefined {
    return this.options.signer ? identityOfSigner(this.options.signer) : context.identity;
  }

  /** A signer over the newest key of {@link identityOf}. */
  private signerOf(context: ModuleContext): Signer | undefined {
    const identity = this.identityOf(context);
    return identity && currentSignerOf(identity);
  }

  /** The provider's side of escrow, when an escrow agent is configured: checks escrows, claims costs. */
  private escrow(context: ModuleContext, store: AcmpTaskStore): ProviderEscrow | undefined {
    const { escrowAgent } = this.options;
    if (!escrowAgent) return undefined;
    return createProviderEscrow(escrowAgent, {
      reservations: reservationStoreOf(context),
      capabilities: this.options.capabilities,
      task: (id) => store.get(id),
      signer: this.signerOf(context),
      clock: context.clock,
      logger: context.logger,
    });
  }

  /** The provider core over the task store, checking escrows and negotiating when configured. */
  private provider(
    context: ModuleContext,
    parts: {
      store: AcmpTaskStore;
      escrow: ProviderEscrow | undefined;
      negotiating: AcmpNegotiation | undefined;
    },
  ): AcmpProvider {
    // The module's own options are not the provider's.
    const { required, negotiation, escrowAgent, ...providerOptions } = this.options;
    const { store, escrow, negotiating } = parts;
    const identity = this.identityOf(context);
    return createAcmpProvider({
      ...providerOptions,
      ...(escrow ? { escrow: escrow.verifier } : {}),
      store,
      ...(negotiating ? { negotiation: negotiating.negotiatorFor(this.options.capabilities) } : {}),
      ...(identity ? { identity } : {}),
      clock: context.clock,
      ids: context.ids,
      logger: context.logger,
      ...(context.metrics ? { metrics: context.metrics } : {}),
    });
  }

  /** The A2A binding of the provider, with the escrow extension and session mode when configured. */
  private binding(
    context: ModuleContext,
    provider: AcmpProvider,
    parts: { escrow: ProviderEscrow | undefined; sessions: StartedSessions | undefined },
  ): AcmpBinding {
    return createAcmpBinding({
      provider,
      required: this.options.required,
      extensions: parts.escrow ? [parts.escrow.extension] : [],
      sessions: parts.sessions?.binding,
      ids: context.ids,
      clock: context.clock,
      logger: context.logger,
    });
  }
}

/** A started ACMP module: its A2A binding and its graceful stop (its MCP methods are a contribution). */
class RunningAcmpModule implements ModuleParts {
  readonly binding: AcmpBinding;
  /** Set once {@link drain} ran: close() then waits no second grace. */
  private drained = false;

  constructor(private readonly held: AcmpHeld) {
    this.binding = held.binding;
  }

  /**
   * New invokes are refused (-33099 `draining`) on every binding; running ones get `graceMs` to finish,
   * and the A2A calls waiting for them to send their answers.
   */
  async drain(graceMs: number): Promise<void> {
    await Promise.all([this.held.provider.drain(graceMs), this.binding.drain(graceMs)]);
    this.drained = true;
  }

  /**
   * Graceful stop: running invokes get a grace period to finish (their results are stored and replayed to
   * retries) unless {@link drain} gave them one already; what still runs then ends as -33099 and is saved
   * before the database closes.
   */
  async close(): Promise<void> {
    const { escrow, provider, sessions, store } = this.held;
    await escrow?.stop();
    await provider.drain(this.drained ? 0 : SHUTDOWN_GRACE_MS);
    await provider.close();
    await this.binding.drain(FINAL_SAVE_MS);
    await sessions?.service.close();
    await store.close?.();
  }
}
