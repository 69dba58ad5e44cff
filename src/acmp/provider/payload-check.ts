import { PayloadSchema, type Payload } from '../wire/task-messages.js';

/**
 * Handler output is checked like wire input (Layer 1 §3.1 `output`, §3.5 `chunk`: a `{type, data}`
 * payload): a bad payload is a provider bug, answered -33099 by the caller. The schema is the one
 * definition; the common chunk — a plain object holding exactly a non-empty string `type` and a string
 * `data` — is recognised without it and rebuilt exactly as the schema would return it, because a stream
 * crosses this check once per chunk (docs/performance.md "Stream chunks").
 * @throws TypeError when the value is no payload.
 */
export function checkPayload(value: unknown): Payload {
  const plain = plainTextPayload(value);
  if (plain) return plain;
  const parsed = PayloadSchema.safeParse(value);
  if (!parsed.success) throw new TypeError('capability handler produced an invalid {type, data} payload');
  return parsed.data;
}

/** `{ type, data }` rebuilt when `value` is a plain object of exactly those two string members. */
function plainTextPayload(value: unknown): Payload | undefined {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return undefined;
  let keys = 0;
  for (const key in value) {
    if (key !== 'type' && key !== 'data') return undefined;
    keys++;
  }
  if (keys !== 2 || !('type' in value) || !('data' in value)) return undefined;
  const { type, data } = value;
  return typeof type === 'string' && type.length > 0 && typeof data === 'string' ? { type, data } : undefined;
}
