import { createHash } from 'node:crypto';
import { LocalError } from './errors.js';

/** Nesting depth beyond which a value is refused (a cycle, or nothing a JSON peer would send). */
const MAX_DEPTH = 1000;
/** Any UTF-16 surrogate: only a string with one needs the pairing check. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * RFC 8785 (JCS) canonical serialisation, written for speed (it runs on every envelope and event; the
 * `canonicalize` library it replaces spent most of its time in a per-string surrogate scan and a
 * cycle-tracking set). The output is byte for byte the library's, which a property test checks: object
 * members sorted by key in UTF-16 code-unit order (§3.2.3), members whose value is undefined omitted,
 * undefined array items as null, strings and numbers as ECMAScript's JSON.stringify writes them
 * (§3.2.2.2, §3.2.2.3), `toJSON` honoured.
 * @throws LocalError `INVALID_STATE` for values JSON cannot carry (undefined at the root, non-finite
 *   numbers, bigints, functions, lone surrogates (§3.2.2.2), nesting deeper than 1,000 levels or a cycle).
 */
export function canonicalJson(value: unknown): string {
  const text = jcs(value, 0);
  if (text === undefined) throw new LocalError('INVALID_STATE', 'value cannot be canonicalised as JSON');
  return text;
}

/** The JCS text of `value`, or undefined for a value an object member or array item omits (undefined, a symbol). */
function jcs(value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case 'string':
      if (SURROGATE.test(value) && hasLoneSurrogate(value)) throw unrepresentable();
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw unrepresentable();
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'symbol':
      return undefined;
    case 'object':
      if (value === null) return 'null';
      if (depth >= MAX_DEPTH) throw unrepresentable();
      return jcsObject(value, depth + 1);
    case 'bigint':
    case 'function':
      throw unrepresentable();
  }
}

function jcsObject(value: object, depth: number): string | undefined {
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
    return jcs((value as { toJSON(): unknown }).toJSON(), depth);
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) text += ',';
      text += jcs(value[i], depth) ?? 'null';
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (!isSorted(keys)) keys.sort();
  let text = '{';
  for (const key of keys) {
    const member = jcs(record[key], depth);
    if (member === undefined) continue;
    if (text.length > 1) text += ',';
    text += `${jcs(key, depth) ?? ''}:${member}`;
  }
  return `${text}}`;
}

/** Whether keys are already in UTF-16 code-unit order (as a canonical text parses): no sort needed. */
function isSorted(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] ?? '') > (keys[i] ?? '')) return false;
  return true;
}

function hasLoneSurrogate(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xdc00 && code <= 0xdfff) return true;
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      i++;
    }
  }
  return false;
}

function unrepresentable(): LocalError {
  return new LocalError('INVALID_STATE', 'value cannot be canonicalised as JSON');
}

/** UTF-8 bytes of {@link canonicalJson}. */
export function canonicalBytes(value: unknown): Buffer {
  return Buffer.from(canonicalJson(value), 'utf8');
}

/** `sha256:` + lowercase hex digest of the JCS bytes of `value`. */
export function sha256Jcs(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')}`;
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
  } else {
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const member = record[key];
      if (member === undefined || typeof member === 'symbol') continue;
      parts.push(`${canonicalJson(key)}:${canonicalJsonShared(member, memo, depth - 1)}`);
    }
    text = `{${parts.join(',')}}`;
  }
  memo.set(value, text);
  return text;
}

function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}
