import { acmpScenario } from './acmp.js';
import { acmpDagScenario } from './acmp-dag.js';
import { acmpMcpScenario } from './acmp-mcp.js';
import { acmpNegotiationScenario } from './acmp-negotiation.js';
import { acpspecScenario } from './acpspec.js';
import { escrowScenario } from './escrow.js';
import { foundationScenario } from './foundation.js';
import { identityScenario } from './identity.js';
import { walletScenario } from './wallet.js';

/** What a scenario gets: the host's URL, the CA to trust, and a transcript writer. */
export interface DemoContext {
  url: string;
  caCert: string | undefined;
  dataDir: string;
  say(line: string): void;
}

export interface DemoScenario {
  title: string;
  run(ctx: DemoContext): Promise<void>;
}

/** Scenarios in the order the demo runs them; each binding adds its own. */
export const DEMO_SCENARIOS: readonly DemoScenario[] = [
  foundationScenario,
  acmpScenario,
  acmpMcpScenario,
  acmpNegotiationScenario,
  acmpDagScenario,
  escrowScenario,
  walletScenario,
  identityScenario,
  acpspecScenario,
];
