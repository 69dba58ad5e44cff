import { randomBytes, randomUUID } from 'node:crypto';

/** Source of identifiers; injected so tests can make them predictable. */
export interface IdSource {
  /** A new globally unique id, optionally prefixed (`task_…`). */
  newId(prefix?: string): string;
}

/**
 * RFC 9562 UUIDv7: 48-bit Unix milliseconds, version 7, 74 random bits. Sortable by creation time,
 * which keeps database indexes on ids append-mostly.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  let ms = BigInt(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = Number(ms & 0xffn);
    ms >>= 8n;
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Default id source: `prefix_` + UUIDv7 (hex, no dashes), or a plain UUIDv4 without a prefix. */
export const systemIds: IdSource = {
  newId(prefix?: string): string {
    return prefix === undefined ? randomUUID() : `${prefix}_${uuidv7().replaceAll('-', '')}`;
  },
};
