import type { Check } from '../check.js';

/** The ACPspec checks (seed 001); a placeholder until they are written. */
export const acpspecChecks: readonly Check[] = [];
