import type { A2ABinding } from '../../a2a/binding.js';
import { createEscrowBinding } from '../../a2a/escrow/binding.js';
import { formatCu } from '../../acmp/escrow/amounts.js';
import { createEscrowAgent, type EscrowAgent, type EscrowAgentOptions } from '../../acmp/escrow/agent.js';
import {
  checkEscrowSettings,
  DEFAULT_ESCROW_SETTINGS,
  type EscrowSettings,
} from '../../acmp/escrow/constants.js';
import type { EscrowStore } from '../../acmp/escrow/store.js';
import { LocalError } from '../../shared/errors.js';
import {
  ESCROW_OWNER_COLUMNS,
  escrowMigrations,
  KyselyEscrowStore,
} from '../../storage/escrow/escrow-store-kysely.js';
import { MemoryEscrowStore } from '../../storage/memory/escrow-store-memory.js';
import type { HostModule, ModuleContext, ModuleParts } from '../module.js';

/** Options of {@link escrowModule}. */
export interface EscrowModuleOptions {
  /** Policy advertised on the card (challenge window range, dispute deadline and default outcome). */
  settings?: Partial<EscrowSettings>;
  /** The ACMP extension's `required` flag (true for a host that serves only escrow). */
  required?: boolean;
  /** How often due transitions (window ends, deadlines, expiries) and pending payouts are processed (default 1 s). */
  tickMs?: number;
  /** Serve over plain HTTP (tests on loopback only): bearer tokens and money otherwise travel in the clear. */
  allowPlaintext?: boolean;
  /** Test hook: see {@link EscrowAgentOptions.beforePayout}. */
  beforePayout?: EscrowAgentOptions['beforePayout'];
}

/**
 * The ACMP Layer 4 escrow agent as a host module (docs/acmp-escrow.md): its tables, the agent over the
 * host's database and its A2A binding. List it before `acmpModule` when one host serves both, so escrow
 * messages reach this binding. Needs bearer tokens: an anonymous caller is never a party (L4 §1).
 * @throws LocalError `CONFIG_INVALID` for settings outside the range the card advertises (docs/acmp-escrow.md §1).
 */
export function escrowModule(options: EscrowModuleOptions = {}): HostModule {
  // The card advertises these settings: an agent that would break its own advertisement does not start.
  return new EscrowModule(options, checkEscrowSettings({ ...DEFAULT_ESCROW_SETTINGS, ...options.settings }));
}

/** The escrow store for the host's dialect: over the host database when there is one, in memory otherwise. */
function escrowStoreOf(context: Pick<ModuleContext, 'database' | 'logger' | 'metrics'>): EscrowStore {
  return context.database
    ? new KyselyEscrowStore(context.database, {
        logger: context.logger,
        ...(context.metrics ? { metrics: context.metrics } : {}),
      })
    : new MemoryEscrowStore();
}

/** The escrow module: its tables, the TLS check, and the agent each start runs. */
class EscrowModule implements HostModule {
  readonly name = 'escrow';
  readonly migrations = [escrowMigrations];
  readonly ownerColumns = ESCROW_OWNER_COLUMNS;

  constructor(
    private readonly options: EscrowModuleOptions,
    private readonly settings: EscrowSettings,
  ) {}

  check({ secure }: { secure: boolean }): void {
    if (!secure && this.options.allowPlaintext !== true) {
      throw new LocalError(
        'CONFIG_INVALID',
        'the escrow agent moves money on bearer credentials and must be served over TLS',
      );
    }
  }

  async start(context: ModuleContext): Promise<ModuleParts> {
    const store = escrowStoreOf(context);
    await store.open?.();
    const agent = createEscrowAgent({
      store,
      settings: this.settings,
      clock: context.clock,
      ids: context.ids,
      logger: context.logger,
      ...(context.metrics ? { metrics: context.metrics } : {}),
      beforePayout: this.options.beforePayout,
    });
    // Payouts left pending by a crash between a transition and its payout run now, once (L4 §6, §7.1).
    await agent.tick();
    agent.start(this.options.tickMs ?? 1_000);
    // The CU held now, read from the store at each scrape (docs/operations.md "Metrics").
    context.metrics?.readGauge('escrow_held_cu', async () => formatCu(await store.held()));
    const binding = createEscrowBinding({ agent, required: this.options.required, ids: context.ids });
    return new RunningEscrowModule(store, agent, binding);
  }
}

/** A started escrow module: the agent's A2A binding; closing stops the agent, then its store. */
class RunningEscrowModule implements ModuleParts {
  constructor(
    private readonly store: EscrowStore,
    private readonly agent: EscrowAgent,
    readonly binding: A2ABinding,
  ) {}

  async close(): Promise<void> {
    await this.agent.stop();
    await this.store.close?.();
  }
}
