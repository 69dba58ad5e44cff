import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assembleChunks, createResultHashProof, resultHash, verifyProof } from './proof.js';

describe('result-hash (Layer 3 §3.1)', () => {
  const output = { type: 'json', data: { sentiment: 'negative', confidence: 0.92 } };

  it('hashes the JCS bytes of {type, data}', () => {
    const jcs = '{"data":{"confidence":0.92,"sentiment":"negative"},"type":"json"}';
    expect(resultHash(output)).toBe(`sha256:${createHash('sha256').update(jcs).digest('hex')}`);
  });

  it('adds input_hash over the invoke input', () => {
    const input = { type: 'text', data: 'x' };
    expect(createResultHashProof(output, input)).toEqual({
      method: 'result-hash',
      hash: resultHash(output),
      input_hash: resultHash(input),
    });
  });

  it('verifies a matching proof', () => {
    const input = { type: 'text', data: 'x' };
    expect(
      verifyProof(createResultHashProof(output, input), { method: 'result-hash', output, input }),
    ).toEqual({ ok: true });
  });

  it('rejects a tampered output', () => {
    const proof = createResultHashProof(output);
    expect(verifyProof(proof, { method: 'result-hash', output: { ...output, data: 'other' } })).toEqual({
      ok: false,
      reason: 'hash_mismatch',
    });
  });

  it('rejects a proof of another method than the negotiated one (Layer 3 §2)', () => {
    expect(verifyProof({ method: 'tee-attestation' }, { method: 'result-hash', output })).toEqual({
      ok: false,
      reason: 'method_mismatch',
    });
  });

  it('rejects an input_hash over another input', () => {
    const proof = createResultHashProof(output, { type: 'text', data: 'a' });
    expect(
      verifyProof(proof, { method: 'result-hash', output, input: { type: 'text', data: 'b' } }),
    ).toMatchObject({ ok: false, reason: 'input_hash_mismatch' });
  });
});

describe('chunk assembly (docs/acmp-core.md)', () => {
  it('concatenates string chunks of one type', () => {
    expect(
      assembleChunks([
        { type: 'text', data: 'a ' },
        { type: 'text', data: 'b' },
      ]),
    ).toEqual({ type: 'text', data: 'a b' });
  });

  it('keeps a single chunk unchanged', () => {
    expect(assembleChunks([{ type: 'json', data: { a: 1 } }])).toEqual({ type: 'json', data: { a: 1 } });
  });

  it('collects non-string chunks of one type into an array', () => {
    expect(
      assembleChunks([
        { type: 'json', data: 1 },
        { type: 'json', data: { b: 2 } },
      ]),
    ).toEqual({ type: 'json', data: [1, { b: 2 }] });
  });

  it('wraps mixed types as json {type, data} items', () => {
    expect(
      assembleChunks([
        { type: 'text', data: 'a' },
        { type: 'json', data: 1 },
      ]),
    ).toEqual({
      type: 'json',
      data: [
        { type: 'text', data: 'a' },
        { type: 'json', data: 1 },
      ],
    });
  });

  it('assembles no chunks to an empty json array', () => {
    expect(assembleChunks([])).toEqual({ type: 'json', data: [] });
  });
});
