/**
 * The one check every JSON body passes at the edge, whatever the transport (docs/host.md "Bad input").
 * The profile is I-JSON (RFC 7493) plus a nesting limit (RFC 8259 §9 lets a parser set one):
 * - the text is UTF-8 (RFC 8259 §8.1; RFC 7493 §2.1) — invalid bytes are refused, never replaced by U+FFFD;
 * - no string or member name holds a lone surrogate (RFC 7493 §2.1) or U+0000 (PostgreSQL text cannot
 *   hold it, and the limits must be the same on every store);
 * - every number is finite and every integer lies within ±(2^53−1) (RFC 7493 §2.2), so no integer is
 *   rounded on its way in (`9007199254740993` would silently become …992). Above 2^53 every double is an
 *   integer and the parsed value cannot tell whether it was rounded, so magnitudes of 2^53 and more are
 *   refused whatever their spelling (`1e20` too): such values travel as strings;
 * - objects and arrays nest at most {@link JSON_LIMITS}.maxDepth deep.
 */

/** The limits of the edge profile. */
export const JSON_LIMITS = {
  /** Nesting depth of objects and arrays; the outermost container is depth 1. */
  maxDepth: 64,
} as const;

/** Why a body failed: unreadable text, or a value outside the profile. */
export type JsonProblem = 'utf8' | 'syntax' | 'depth' | 'number' | 'string';

/** Outcome of {@link checkJsonBytes}. An empty body is `{ ok: true, value: undefined }`. */
export type JsonCheck = { ok: true; value: unknown } | { ok: false; problem: JsonProblem };

const utf8 = new TextDecoder('utf-8', { fatal: true });
/** With the `u` flag a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Decodes and parses a body, then holds the value to the profile. A leading byte order mark is ignored
 * (RFC 8259 §8.1 allows that).
 */
export function checkJsonBytes(bytes: Uint8Array): JsonCheck {
  const parsed = parseJsonBytes(bytes);
  if (!parsed.ok) return parsed;
  const problem = checkJsonValue(parsed.value);
  return problem ? { ok: false, problem } : parsed;
}

/** Parses text, without the profile check (for callers that check the value later with {@link checkJsonValue}). */
export function parseJsonBytes(bytes: Uint8Array): JsonCheck {
  if (bytes.length === 0) return { ok: true, value: undefined };
  const text = decodeUtf8(bytes);
  if (text === undefined) return { ok: false, problem: 'utf8' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: 'syntax' };
  }
}

/**
 * The first way a parsed value breaks the profile, or undefined. Walks without recursion, so a value
 * nested far beyond the limit is refused without exhausting the stack.
 */
export function checkJsonValue(
  root: unknown,
  maxDepth: number = JSON_LIMITS.maxDepth,
): JsonProblem | undefined {
  // Two parallel stacks rather than one of [value, depth] pairs, and keys read in place rather than
  // through Object.entries: every request crosses this walk, and it allocates nothing per member.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  for (let depth = depths.pop(); depth !== undefined; depth = depths.pop()) {
    const value = values.pop();
    if (typeof value === 'string') {
      if (!isSafeJsonString(value)) return 'string';
    } else if (typeof value === 'number') {
      if (!isExactJsonNumber(value)) return 'number';
    } else if (typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)) {
      // Bytes (a decoded protobuf `bytes` field) are no JSON value: nothing inside them to judge.
      if (depth + 1 > maxDepth) return 'depth';
      if (Array.isArray(value)) {
        for (const item of value) {
          values.push(item);
          depths.push(depth + 1);
        }
      } else {
        // Own enumerable string keys, in Object.entries' order.
        for (const key in value) {
          if (!Object.hasOwn(value, key)) continue;
          if (!isSafeJsonString(key)) return 'string';
          const member: unknown = Reflect.get(value, key);
          values.push(member);
          depths.push(depth + 1);
        }
      }
    }
  }
  return undefined;
}

/** A string the profile accepts: no lone surrogate, no U+0000. */
export function isSafeJsonString(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value);
}

/** A number JSON text can hold exactly: finite, and an integer only within ±(2^53−1). */
function isExactJsonNumber(value: number): boolean {
  return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value));
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
