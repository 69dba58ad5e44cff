/*
 * Generates src/acpspec/envelope-schema.gen.ts from schemas/acpspec-envelope-0.1.schema.json with
 * json-schema-to-typescript, so the schema stays the one source of the envelope model (STYLE.md
 * "Boundaries"). `npm run gen:types` writes the file; `npm run gen:types -- --check` exits 1 when the
 * committed file differs from what the schema generates (test/acpspec/envelope-types.test.ts does the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';

/** The generated file, relative to the repository root. */
export const ENVELOPE_TYPES_FILE = fileURLToPath(
  new URL('../src/acpspec/envelope-schema.gen.ts', import.meta.url),
);
const SCHEMA_FILE = fileURLToPath(new URL('../schemas/acpspec-envelope-0.1.schema.json', import.meta.url));

const BANNER = `/*
 * GENERATED from schemas/acpspec-envelope-0.1.schema.json by scripts/envelope-types.ts
 * (json-schema-to-typescript). Do not edit: change the schema and run \`npm run gen:types\`.
 * src/acpspec/envelope.ts builds the snapshot/delta model from these types.
 */`;

/** The TypeScript source the schema generates. */
export async function generateEnvelopeTypes(): Promise<string> {
  const schema = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as JSONSchema;
  // The root is named by us, not by the schema's title or $id.
  const { title: _title, $id: _id, ...root } = schema;
  return compile(root, 'EnvelopeSchema', {
    bannerComment: BANNER,
    additionalProperties: true,
    unreachableDefinitions: true,
    strictIndexSignatures: false,
    declareExternallyReferenced: true,
    format: true,
    style: { singleQuote: true, printWidth: 120 },
  });
}

async function main(): Promise<void> {
  const generated = await generateEnvelopeTypes();
  if (process.argv.includes('--check')) {
    const current = readFileSync(ENVELOPE_TYPES_FILE, 'utf8');
    if (current !== generated) {
      process.stderr.write(`${ENVELOPE_TYPES_FILE} is out of date: run npm run gen:types\n`);
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(ENVELOPE_TYPES_FILE, generated);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
