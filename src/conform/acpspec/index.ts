import type { Check } from '../check.js';
import { bytesCheck } from './check-bytes.js';
import { cardParamsCheck } from './check-card.js';
import { consentCheck } from './check-consent.js';
import { eventsCheck } from './check-events.js';
import { invalidCheck } from './check-invalid.js';
import { kindsCheck } from './check-kinds.js';
import { onePartCheck } from './check-one-part.js';
import { schemaUrlCheck } from './check-schema.js';
import { cleartextCheck } from './check-tls.js';
import { parentUnknownCheck, stateSnapshotCheck } from './check-two-agents.js';
import type { AcpBinding } from './expect.js';

/** The checks that run the same rule on each binding, in report order. */
function perBinding(binding: AcpBinding): Check[] {
  return [
    kindsCheck(binding),
    ...(binding === 'acpspec-a2a' ? [onePartCheck] : []),
    invalidCheck(binding),
    parentUnknownCheck(binding),
    stateSnapshotCheck(binding),
    consentCheck(binding),
    eventsCheck(binding),
    cleartextCheck(binding),
  ];
}

/**
 * The ACPspec checks (seed 001, docs/acpspec-core.md; docs/conformance.md "ACPspec checks"): the
 * card's declaration and schema, then each rule over A2A and over HTTPS, then byte identity across the
 * two. Every check but the card's two writes to the agent under a fresh transaction id of its own
 * (`writes: true`); none spends CU, so all run with `--max-spend 0`.
 */
export const acpspecChecks: readonly Check[] = [
  cardParamsCheck,
  schemaUrlCheck,
  ...perBinding('acpspec-a2a'),
  ...perBinding('acpspec-https'),
  bytesCheck,
];
