import type { AcpState } from '../../acpspec/envelope.js';
import { findPersonalData } from '../../acpspec/pii.js';

/** What a masked value shows instead of itself. */
const MASK = '•••';

/**
 * A copy of an ACPspec state (or snapshot) with every personal-data value (the schema's `x-acp-pii`
 * locations, src/acpspec/pii.ts) replaced by {@link MASK}: names, contacts, addresses, credit data.
 */
export function maskState<T extends AcpState | Record<string, unknown>>(state: T): T {
  const copy = structuredClone(state);
  for (const hit of findPersonalData(copy)) setAt(copy, hit.segments);
  return copy;
}

function setAt(root: unknown, segments: readonly string[]): void {
  let node = root as Record<string, unknown>;
  for (const segment of segments.slice(0, -1)) {
    const next = node[segment];
    if (typeof next !== 'object' || next === null) return;
    node = next as Record<string, unknown>;
  }
  const last = segments.at(-1);
  if (last !== undefined && Object.hasOwn(node, last)) node[last] = MASK;
}

/**
 * An ACMP payload with its content hidden: buyers' inputs and providers' outputs may be anything, personal
 * data included, so the console shows their type and size only until the operator asks.
 */
export function maskPayloads(value: unknown, depth = 0): unknown {
  if (depth > 16 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => maskPayloads(v, depth + 1));
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(record)) {
    if (key === 'data' && typeof record.type === 'string') out[key] = `${MASK} (${sizeOf(child)} bytes)`;
    else if (key === 'text' && typeof child === 'string') out[key] = `${MASK} (${sizeOf(child)} bytes)`;
    else out[key] = maskPayloads(child, depth + 1);
  }
  return out;
}

function sizeOf(value: unknown): number {
  return Buffer.byteLength(typeof value === 'string' ? value : JSON.stringify(value ?? null));
}
