import { acmpChecks } from './acmp/index.js';
import { acpspecChecks } from './acpspec/index.js';
import type { Check } from './check.js';

/** Every check of the kit, in report order; ids are unique (test/conform/registry.test.ts). */
export const allChecks: readonly Check[] = [...acmpChecks, ...acpspecChecks];
