import { readFileSync } from 'node:fs';
import { ACP_SCHEMA_FILE } from './constants.js';

/**
 * The envelope JSON Schema document (`schemas/acpspec-envelope-0.1.schema.json`), read once at start-up.
 * The path resolves to the package's `schemas/` folder both from `src/acpspec` and `dist/acpspec`.
 */
export const ACP_SCHEMA_TEXT: string = readFileSync(
  new URL(`../../schemas/${ACP_SCHEMA_FILE}`, import.meta.url),
  'utf8',
);

/** The parsed envelope schema. Treat as read-only. */
export const ACP_ENVELOPE_SCHEMA: Readonly<Record<string, unknown>> = JSON.parse(ACP_SCHEMA_TEXT) as Record<
  string,
  unknown
>;
