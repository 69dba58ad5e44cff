import { z } from 'zod';
import type { JsonValue } from '../../shared/json.js';
import { inputJsonSchemaOf, type JsonSchemaObject } from '../wire/capability-input.js';
import { PayloadSchema, type Payload } from '../wire/task-messages.js';
import type { AcmpCapability } from './provider-types.js';

/*
 * A2A v1.0 skills have no metadata field, so a capability's price and input schema travel as two
 * labelled lines at the end of the skill's description, and its example inputs as the skill's `examples`
 * (one JSON payload each). docs/acmp-a2a-binding.md §1.
 */
const PRICE_LABEL = 'Price: ';
const INPUT_LABEL = 'Input data (JSON Schema): ';

/** The price of a capability in words: its `priceDescription`, its fixed price, or "depends on the input". */
function priceText(capability: AcmpCapability): string {
  if (capability.priceDescription !== undefined) return capability.priceDescription;
  return typeof capability.price === 'number' ? `${capability.price} CU` : 'depends on the input';
}

/** The skill text of a capability: description, then the price and input-schema lines; examples as JSON. */
export function capabilitySkillText(capability: AcmpCapability): { description: string; examples: string[] } {
  const schema = inputJsonSchemaOf(capability);
  const lines = [
    capability.description ?? `ACMP capability ${capability.id}`,
    `${PRICE_LABEL}${priceText(capability)}`,
  ];
  if (schema !== undefined) lines.push(`${INPUT_LABEL}${JSON.stringify(schema)}`);
  return {
    description: lines.join('\n'),
    examples: (capability.examples ?? []).map((e) => JSON.stringify(e)),
  };
}

/** What a buyer reads back from a skill written by {@link capabilitySkillText} (any field may be absent). */
export interface CapabilitySkillInfo {
  readonly summary: string;
  readonly price?: string;
  readonly inputSchema?: JsonSchemaObject;
  readonly examples: Payload[];
}

/** Reads a skill's description and examples back; text that does not follow the format is kept as summary. */
export function readCapabilitySkill(skill: {
  description: string;
  examples: readonly string[];
}): CapabilitySkillInfo {
  const summary: string[] = [];
  let price: string | undefined;
  let inputSchema: JsonSchemaObject | undefined;
  for (const line of skill.description.split('\n')) {
    if (line.startsWith(PRICE_LABEL)) price = line.slice(PRICE_LABEL.length);
    else if (line.startsWith(INPUT_LABEL)) inputSchema = parseObject(line.slice(INPUT_LABEL.length));
    else summary.push(line);
  }
  const examples = skill.examples.flatMap((text) => {
    const example = PayloadSchema.safeParse(parseJson(text));
    return example.success ? [example.data] : [];
  });
  return {
    summary: summary.join('\n'),
    ...(price !== undefined ? { price } : {}),
    ...(inputSchema ? { inputSchema } : {}),
    examples,
  };
}

/** A JSON object, as a skill's input-schema line and its examples carry one. */
const JsonObjectSchema = z.record(z.string(), z.json());

function parseObject(text: string): Record<string, JsonValue> | undefined {
  const parsed = JsonObjectSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
