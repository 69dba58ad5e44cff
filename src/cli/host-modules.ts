import type { ProviderEscrowOptions } from '../a2a/escrow/provider-escrow.js';
import { demoCapabilities } from '../demo/capabilities.js';
import type { EscrowSettings } from '../acmp/escrow/constants.js';
import { acmpEscrowMigrations } from '../storage/escrow/escrow-reservations.js';
import type { HostConfig } from '../server/config.js';
import type { HostModule } from '../server/module.js';
import { acmpModule } from '../server/modules/acmp.js';
import { acpModule } from '../server/modules/acpspec.js';
import { escrowModule } from '../server/modules/escrow.js';
import { tckModule } from '../server/modules/tck.js';

/** The agent id the default host writes on its ACPspec snapshots. */
export const DEFAULT_ACP_PRODUCER = { agent_id: 'agent:a2a-commerce-dealer', role: 'dealer_agent' } as const;

/**
 * The modules `serve` and the demo run by default: both bindings with their demo definitions (ACMP with
 * Layer 6 negotiation, flat and in sessions).
 */
export function defaultModules(config: HostConfig): HostModule[] {
  return selectModules(config, { modules: ['acmp', 'acpspec'] });
}

/** The modules a host can run. */
export const MODULE_NAMES = ['acmp', 'acpspec', 'escrow', 'tck'] as const;
export type ModuleName = (typeof MODULE_NAMES)[number];

/** Which modules `serve` runs, and how. */
export interface ModuleSelection {
  readonly modules: readonly ModuleName[];
  /** The escrow agent the ACMP provider checks escrows at (docs/acmp-escrow.md). */
  readonly escrowAgent?: ProviderEscrowOptions;
  /** The escrow agent's advertised policy. */
  readonly escrowSettings?: Partial<EscrowSettings>;
  /** The A2A TCK's `TCK_STREAMING_TIMEOUT` for the `tck` module (docs/conformance.md). */
  readonly tckStreamingTimeoutMs?: number;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The modules of a selection. The escrow module comes first, so escrow messages reach its binding when
 * the same host also serves ACMP. Escrow over plain HTTP is allowed on a loopback address only.
 */
export function selectModules(config: HostConfig, selection: ModuleSelection): HostModule[] {
  const wanted = new Set(selection.modules);
  const modules: HostModule[] = [];
  if (wanted.has('escrow'))
    modules.push(
      escrowModule({
        settings: selection.escrowSettings,
        allowPlaintext: LOOPBACK.has(config.host) && config.publicUrl === undefined,
      }),
    );
  if (wanted.has('acmp')) {
    // The caller limits of the host's configuration (docs/host.md "Limits per caller").
    const negotiation = { sessions: { maxOpenSessions: config.limits.maxOpenSessions } };
    modules.push(
      acmpModule({
        capabilities: demoCapabilities(),
        providerId: 'agent:a2a-commerce-demo:local',
        maxRunningTasks: config.limits.maxRunningTasks,
        negotiation,
        ...(selection.escrowAgent ? { escrowAgent: selection.escrowAgent } : {}),
      }),
    );
  }
  if (wanted.has('acpspec')) modules.push(acpModule({ producer: { ...DEFAULT_ACP_PRODUCER } }));
  // Opt-in only (never in defaultModules): plain A2A messages then get the A2A TCK's prefix behaviour.
  if (wanted.has('tck'))
    modules.push(
      tckModule(
        selection.tckStreamingTimeoutMs === undefined
          ? {}
          : { streamingTimeoutMs: selection.tckStreamingTimeoutMs },
      ),
    );
  return modules;
}

/** Every module with tables, for `migrate` and `reassign` (a table that does not exist is skipped). */
export function storageModules(config: HostConfig): HostModule[] {
  return [
    ...selectModules(config, { modules: MODULE_NAMES }),
    { name: 'acmp-escrow', migrations: [acmpEscrowMigrations], start: () => ({}) },
  ];
}
