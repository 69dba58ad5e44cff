import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { LocalError } from './errors.js';

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
  return `sha256:${createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')}`;
}
