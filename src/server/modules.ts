import { demoCapabilities } from '../acmp/demo-capabilities.js';
import type { HostConfig } from './config.js';
import type { HostModule } from './module.js';
import { acmpModule } from './modules/acmp.js';
import { acpModule } from './modules/acpspec.js';

/** The agent id the default host writes on its ACPspec snapshots. */
export const DEFAULT_ACP_PRODUCER = { agent_id: 'agent:a2a-commerce-dealer', role: 'dealer_agent' } as const;

/**
 * The modules `serve` and the demo run by default: both bindings with their demo definitions (ACMP with
 * Layer 6 negotiation, flat and in sessions).
 */
export function defaultModules(_config: HostConfig): HostModule[] {
  return [
    acmpModule({ capabilities: demoCapabilities(), providerId: 'agent:a2a-commerce-demo:local', negotiation: { sessions: true } }),
    acpModule({ producer: { ...DEFAULT_ACP_PRODUCER } }),
  ];
}
