import type { Check } from '../check.js';
import { cardChecks } from './card-checks.js';
import { envelopeChecks } from './envelope-checks.js';
import { errorChecks } from './error-checks.js';
import { mcpChecks } from './mcp-checks.js';
import { streamChecks } from './stream-checks.js';

/** The ACMP checks (seed 000 over A2A, and ACMP over MCP), in report order (docs/conformance.md "ACMP checks"). */
export const acmpChecks: readonly Check[] = [
  ...cardChecks,
  ...envelopeChecks,
  ...errorChecks,
  ...streamChecks,
  ...mcpChecks,
];
