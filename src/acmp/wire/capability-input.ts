import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { schemaIssuesOf, type SchemaIssue } from '../../shared/schema-issues.js';
import type { JsonValue } from '../../shared/json.js';

/** A JSON Schema (2020-12) document, as a plain object. */
export type JsonSchemaObject = { readonly [key: string]: JsonValue };

/** The schema of a capability's input `data`: JSON Schema (2020-12) or a zod schema. */
export type CapabilityInputSchema = JsonSchemaObject | z.ZodType;

/** What {@link checkCapabilityInput} and the card need of a capability. */
interface WithInput {
  readonly id: string;
  readonly inputSchema?: CapabilityInputSchema;
}

function isZod(schema: CapabilityInputSchema): schema is z.ZodType {
  return typeof (schema as { safeParse?: unknown }).safeParse === 'function';
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
/** One compiled validator per schema object, compiled on first use. */
const compiled = new WeakMap<object, ValidateFunction>();

function validatorOf(schema: JsonSchemaObject): ValidateFunction {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * Checks an input's `data` against the capability's input schema; no schema accepts everything.
 * Issues point into `data` (JSON Pointer) and state the rule, never the value.
 * @throws Error when the capability's JSON Schema itself does not compile (a provider bug).
 */
export function checkCapabilityInput(capability: WithInput, data: unknown): SchemaIssue[] {
  const schema = capability.inputSchema;
  if (schema === undefined) return [];
  if (isZod(schema)) {
    const parsed = schema.safeParse(data);
    if (parsed.success) return [];
    return parsed.error.issues.map((i) => ({
      pointer: i.path.map((p) => `/${String(p)}`).join(''),
      keyword: i.code,
      message: i.message,
    }));
  }
  const validate = validatorOf(schema);
  return validate(data) ? [] : schemaIssuesOf(validate.errors ?? []);
}

/** The capability's input schema as JSON Schema (zod schemas converted), for cards and the CLI. */
export function inputJsonSchemaOf(capability: WithInput): JsonSchemaObject | undefined {
  const schema = capability.inputSchema;
  if (schema === undefined || !isZod(schema)) return schema;
  try {
    return z.toJSONSchema(schema) as JsonSchemaObject;
  } catch {
    // A zod type JSON Schema cannot express (a transform, a custom check): validated, not described.
    return undefined;
  }
}

/** The `detail` of a -32602 for input that fails the schema: the capability, and the schema's description. */
export function inputMismatchDetail(capability: WithInput): string {
  const description = inputJsonSchemaOf(capability)?.['description'];
  const expected = typeof description === 'string' ? `: expected ${description}` : '';
  return `input.data does not match the input schema of ${capability.id}${expected}`;
}
