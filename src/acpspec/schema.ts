import { readFileSync } from 'node:fs';
import { isJsonObject } from '../shared/json.js';
import { LocalError } from '../shared/errors.js';
import { ACP_SCHEMA_FILE } from './constants.js';

/**
 * The envelope JSON Schema document (`schemas/acpspec-envelope-0.1.schema.json`), read once at start-up.
 * The path resolves to the package's `schemas/` folder both from `src/acpspec` and `dist/acpspec`.
 */
export const ACP_SCHEMA_TEXT: string = readFileSync(
  new URL(`../../schemas/${ACP_SCHEMA_FILE}`, import.meta.url),
  'utf8',
);

/**
 * The parsed envelope schema. Treat as read-only. Ajv checks it as a schema when it compiles it; here it
 * must at least be a JSON object.
 */
export const ACP_ENVELOPE_SCHEMA: Readonly<Record<string, unknown>> = schemaDocument(ACP_SCHEMA_TEXT);

function schemaDocument(text: string): Record<string, unknown> {
  const document: unknown = JSON.parse(text);
  if (!isJsonObject(document))
    throw new LocalError('CONFIG_INVALID', `${ACP_SCHEMA_FILE} is not a JSON object`);
  return document;
}
