import { randomBytes, randomUUID } from 'node:crypto';

/** Source of identifiers; injected so tests can make them predictable. */
export interface IdSource {
  /** A new globally unique id, optionally prefixed (`task_…`). */
  newId(prefix?: string): string;
}

const POOL_SIZE = 16 * 1024;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/**
 * Fills `target` from `start` with cryptographically random bytes drawn from a pool refilled in 16 KiB
 * blocks: one `randomBytes` call serves about 1,600 UUIDs instead of one call each. Bytes are never reused.
 */
function takeRandom(target: Buffer, start: number): void {
  const need = target.length - start;
  if (poolOffset + need > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  pool.copy(target, start, poolOffset, poolOffset + need);
  poolOffset += need;
}

/**
 * RFC 9562 UUIDv7: 48-bit Unix milliseconds, version 7, 74 random bits. Sortable by creation time,
 * which keeps database indexes on ids append-mostly.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const hex = uuidv7Hex(nowMs);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The 32 hex digits of a {@link uuidv7}, without its dashes (the prefixed ids of {@link systemIds}). */
function uuidv7Hex(nowMs: number): string {
  const bytes = Buffer.allocUnsafe(16);
  takeRandom(bytes, 6);
  // 48 bits fit a double exactly; no BigInt needed.
  let ms = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  bytes.writeUInt8((bytes.readUInt8(6) & 0x0f) | 0x70, 6);
  bytes.writeUInt8((bytes.readUInt8(8) & 0x3f) | 0x80, 8);
  return bytes.toString('hex');
}

/** Default id source: `prefix_` + UUIDv7 (hex, no dashes), or a plain UUIDv4 without a prefix. */
export const systemIds: IdSource = {
  newId(prefix?: string): string {
    return prefix === undefined ? randomUUID() : `${prefix}_${uuidv7Hex(Date.now())}`;
  },
};

/**
 * Ids for ACMP task ids that every binding and task store accepts (36 characters, the length of a UUID,
 * well within the host's id limit of src/shared/id-rules.ts): `task_` + 31 hex digits of a UUIDv7 (time-ordered, 70 random bits); other prefixes as
 * {@link systemIds}. The A2A buyer's `a2aTaskIds` is this source.
 */
export const boundedTaskIds: IdSource = {
  newId: (prefix) =>
    prefix === 'task' ? `task_${uuidv7Hex(Date.now()).slice(0, 31)}` : systemIds.newId(prefix),
};
