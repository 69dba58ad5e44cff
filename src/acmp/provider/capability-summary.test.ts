import { describe, expect, it } from 'vitest';
import { readCapabilitySkill } from './capability-summary.js';

describe('readCapabilitySkill (docs/acmp-a2a-binding.md §1)', () => {
  it('reads the price, the input schema and the example payloads of a skill', () => {
    const info = readCapabilitySkill({
      description: 'Counts words.\nPrice: 0.001 CU\nInput data (JSON Schema): {"type":"string"}',
      examples: ['{"type":"text","data":"one two"}'],
    });
    expect(info).toEqual({
      summary: 'Counts words.',
      price: '0.001 CU',
      inputSchema: { type: 'string' },
      examples: [{ type: 'text', data: 'one two' }],
    });
  });

  it('keeps only examples that are payloads (Layer 1 §3.1: a non-empty type and data)', () => {
    const info = readCapabilitySkill({
      description: 'Counts words.',
      examples: ['{"type":"","data":"x"}', '{"data":"x"}', '{"type":"text"}', '["text"]', 'not json'],
    });
    expect(info.examples).toEqual([]);
  });

  it('drops an input-schema line that is not a JSON object', () => {
    const info = readCapabilitySkill({ description: 'Input data (JSON Schema): ["string"]', examples: [] });
    expect(info.inputSchema).toBeUndefined();
  });
});
