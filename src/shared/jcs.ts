import { hash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { LocalError } from './errors.js';
import { isJsonObject } from './json.js';

/**
 * RFC 8785 (JCS) canonical serialisation, through the `canonicalize` library.
 * Throws {@link LocalError} `INVALID_STATE` for values JSON cannot carry (undefined at the root,
 * non-finite numbers).
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (cause) {
    throw new LocalError('INVALID_STATE', 'value cannot be canonicalised as JSON', { cause });
  }
  if (text === undefined) throw new LocalError('INVALID_STATE', 'value cannot be canonicalised as JSON');
  return text;
}

/** UTF-8 bytes of {@link canonicalJson}. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/** `sha256:` + lowercase hex digest of the JCS bytes of `value`. */
export function sha256Jcs(value: unknown): string {
  // One-shot `hash` (Node ≥ 20.12): no Hash stream object per digest, on the hot path of every invoke.
  return `sha256:${hash('sha256', canonicalJson(value), 'hex')}`;
}

/**
 * {@link canonicalJson} of a value built from immutable parts: the canonical text of every object and
 * array node down to `depth` levels is cached by identity in `memo`, so a value that shares most of its
 * subtrees with one serialised before (the next state of a transaction) costs only its new parts.
 * The caller MUST NOT mutate a node after it has been serialised with a memo.
 *
 * The result equals `canonicalJson(value)`: near the root we compose RFC 8785 §3.2 exactly as the
 * `canonicalize` library does (object members sorted by key in UTF-16 code-unit order, members whose
 * value is undefined omitted, undefined array items as null), and the library serialises every key and
 * every subtree below.
 * @throws LocalError `INVALID_STATE` as {@link canonicalJson}.
 */
export function canonicalJsonShared(value: unknown, memo: WeakMap<object, string>, depth = 3): string {
  if (value === null || typeof value !== 'object' || depth <= 0 || hasToJson(value))
    return canonicalJson(value);
  const cached = memo.get(value);
  if (cached !== undefined) return cached;
  let text: string;
  if (Array.isArray(value)) {
    text = `[${value.map((item: unknown) => (item === undefined || typeof item === 'symbol' ? 'null' : canonicalJsonShared(item, memo, depth - 1))).join(',')}]`;
  } else if (isJsonObject(value)) {
    const record = value;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined || typeof member === 'symbol') continue;
      parts.push(`${canonicalJson(key)}:${canonicalJsonShared(member, memo, depth - 1)}`);
    }
    text = `{${parts.join(',')}}`;
  } else {
    return canonicalJson(value);
  }
  memo.set(value, text);
  return text;
}

function hasToJson(value: object): boolean {
  return 'toJSON' in value && typeof value.toJSON === 'function';
}
