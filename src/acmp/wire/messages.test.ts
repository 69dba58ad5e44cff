import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../shared/jcs.js';
import { ACMP_MEDIA_TYPE } from './constants.js';
import { AcmpError } from './errors.js';
import { CapabilityObjectSchema, parseAcmpRoot, parseInvokeParams } from './messages.js';
import { resolveInvoke } from './task-messages.js';

const FIXTURES = join(import.meta.dirname, '../../../test/fixtures/acmp');
const readJson = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof AcmpError) return error.code;
    throw error;
  }
  return undefined;
}

describe('A2A binding §1 envelope (seed message)', () => {
  const message = readJson(join(FIXTURES, 'seed-invoke.json')) as {
    parts: { data: { params: unknown }; media_type: string }[];
  };
  const part = message.parts[0]!;

  it('carries the ACMP media type', () => {
    expect(part.media_type).toBe(ACMP_MEDIA_TYPE);
  });

  it('parses the seed invoke and keeps its params byte-identical under JCS', () => {
    const root = parseAcmpRoot(part.data);
    expect(root).toMatchObject({ kind: 'request', method: 'acmp/invoke' });
    if (root.kind !== 'request') throw new Error('unreachable');
    expect(canonicalJson(root.params)).toBe(canonicalJson(part.data.params));
  });
});

describe('ACMP message fixtures (Layer 1 §3)', () => {
  for (const file of readdirSync(join(FIXTURES, 'valid'))) {
    it(`parses valid/${file} and round-trips it byte-identically under JCS`, () => {
      const payload = readJson(join(FIXTURES, 'valid', file));
      const root = parseAcmpRoot(payload);
      const body =
        root.kind === 'request'
          ? { acmp_method: root.method, params: root.params }
          : root.kind === 'result'
            ? { acmp_result: root.result }
            : { acmp_error: root.error };
      expect(canonicalJson(body)).toBe(canonicalJson(payload));
    });
  }
  for (const file of readdirSync(join(FIXTURES, 'invalid'))) {
    it(`rejects invalid/${file} with the code it names`, () => {
      const { expected_code, payload } = readJson(join(FIXTURES, 'invalid', file)) as {
        expected_code: number;
        payload: unknown;
      };
      expect(codeOf(() => parseAcmpRoot(payload))).toBe(expected_code);
    });
  }
});

describe('acmp/invoke params (Layer 1 §3.1)', () => {
  const base = { task_id: 't1', capability: 'c', input: { type: 'text', data: 'x' } };

  it('does not add defaults to the parsed object', () => {
    expect(parseInvokeParams(base)).toEqual(base);
  });

  it('reads optional fields with the spec defaults', () => {
    expect(resolveInvoke(parseInvokeParams(base))).toEqual({
      outputType: 'json',
      timeoutMs: 30000,
      stream: false,
      inputStream: false,
    });
  });

  it('allows input to be omitted when input_stream is true', () => {
    expect(
      codeOf(() => parseInvokeParams({ task_id: 't', capability: 'c', input_stream: true })),
    ).toBeUndefined();
  });

  it('rejects an input without data', () => {
    expect(codeOf(() => parseInvokeParams({ ...base, input: { type: 'text' } }))).toBe(-32602);
  });

  it('puts the task_id and issue paths into the error data', () => {
    try {
      parseInvokeParams({ ...base, max_price_cu: -1 });
      expect.unreachable();
    } catch (error) {
      expect((error as AcmpError).data).toMatchObject({ task_id: 't1', issues: [{ path: 'max_price_cu' }] });
    }
  });
});

describe('capability object (Layer 1 §1)', () => {
  it('parses the spec example', () => {
    const example = {
      version: '0.1.0',
      role: 'provider',
      accepts: ['acmp/invoke', 'acmp/cancel', 'acmp/inputChunk'],
      emits: ['acmp/streamChunk', 'acmp/heartbeat'],
      features: { output_streaming: true, input_streaming: true, heartbeat_interval_ms: 5000 },
    };
    expect(CapabilityObjectSchema.parse(example)).toEqual(example);
  });
});
