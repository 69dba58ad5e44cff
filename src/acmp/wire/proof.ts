import { canonicalJson, sha256Jcs } from '../../shared/jcs.js';
import { DEFAULT_OUTPUT_TYPE } from './constants.js';
import type { Payload, Proof } from './task-messages.js';

/** The `result-hash` proof envelope (Layer 3 §3.1). */
export interface ResultHashProof {
  method: 'result-hash';
  hash: string;
  input_hash?: string;
  [extra: string]: unknown;
}

/** The `{type, data}` view of a payload: the object Layer 3 §3.1 hashes (extra fields are not hashed). */
function core(payload: Payload): { type: string; data: unknown } {
  return { type: payload.type, data: payload.data };
}

/**
 * `sha256:` + lowercase hex over the RFC 8785 (JCS) bytes of the `{type, data}` object (Layer 3 §3.1).
 * Used for the output (`hash`) and for the invoke `input` (`input_hash`).
 */
export function resultHash(payload: Payload): string {
  return sha256Jcs(core(payload));
}

/**
 * Builds a `result-hash` proof: `hash` over the (assembled) output, `input_hash` over the invoke input
 * when there is one (RECOMMENDED by Layer 3 §3.1).
 */
export function createResultHashProof(output: Payload, input?: Payload): ResultHashProof {
  const proof: ResultHashProof = { method: 'result-hash', hash: resultHash(output) };
  if (input !== undefined) proof.input_hash = resultHash(input);
  return proof;
}

/** Outcome of {@link verifyProof}. */
export type ProofCheck =
  | { ok: true }
  | {
      ok: false;
      reason: 'missing' | 'method_mismatch' | 'unsupported_method' | 'hash_mismatch' | 'input_hash_mismatch';
    };

/**
 * Checks a proof against the output the buyer holds (for streamed results: the reassembled output,
 * Layer 3 §3.1) and, when the proof carries `input_hash`, against the input the buyer sent.
 * A proof whose method differs from the negotiated one is rejected (Layer 3 §2).
 */
export function verifyProof(
  proof: Proof | undefined,
  expected: { method: string; output: Payload; input?: Payload },
): ProofCheck {
  if (proof === undefined) return { ok: false, reason: 'missing' };
  if (proof.method !== expected.method) return { ok: false, reason: 'method_mismatch' };
  if (proof.method !== 'result-hash') return { ok: false, reason: 'unsupported_method' };
  if (proof.hash !== resultHash(expected.output)) return { ok: false, reason: 'hash_mismatch' };
  const inputHash = proof.input_hash;
  if (inputHash !== undefined && (expected.input === undefined || inputHash !== resultHash(expected.input))) {
    return { ok: false, reason: 'input_hash_mismatch' };
  }
  return { ok: true };
}

/**
 * The assembly rule for streamed output (docs/acmp-core.md "Chunk assembly"); provider and buyer both
 * use it, so the provider's `result-hash` over the assembled output verifies on the buyer side.
 *
 * - no chunks → `{type: 'json', data: []}`
 * - one chunk → that chunk's `{type, data}` unchanged (a non-streaming handler's output streams as one chunk)
 * - all chunks of one type, every `data` a string → `{type, data: concatenation}`
 * - all chunks of one type otherwise → `{type, data: [data…]}`
 * - mixed types → `{type: 'json', data: [{type, data}…]}`
 */
export function assembleChunks(chunks: readonly Payload[]): Payload {
  const [first] = chunks;
  if (first === undefined) return { type: DEFAULT_OUTPUT_TYPE, data: [] };
  if (chunks.length === 1) return core(first) as Payload;
  const type = first.type;
  if (!chunks.every((c) => c.type === type)) {
    return { type: DEFAULT_OUTPUT_TYPE, data: chunks.map((c) => core(c)) } as Payload;
  }
  if (chunks.every((c) => typeof c.data === 'string')) {
    return { type, data: chunks.map((c) => c.data as string).join('') };
  }
  return { type, data: chunks.map((c) => c.data) };
}

/** True when two payloads are the same JSON value under JCS (used to de-duplicate replayed chunks). */
export function samePayload(a: Payload, b: Payload): boolean {
  return canonicalJson(core(a)) === canonicalJson(core(b));
}
