import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { readCapabilitySkill } from '../../src/acmp/provider/capability-summary.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup } from '../helpers/host.js';
import { acmpHost, newTaskId } from './helpers.js';

afterEach(cleanup);

// Tests of the demo capabilities invoke with fresh task ids or read the card: one host serves them. A test
// with a capability of its own (its counters asserted) starts its own host.
const demoHost = shared(() => acmpHost());

/** A capability that counts how often its price and its handler ran. */
function countingCapability(
  inputSchema: AcmpCapability['inputSchema'],
): AcmpCapability & { priced: number; ran: number } {
  const capability = {
    id: 'double',
    description: 'Doubles a number.',
    priced: 0,
    ran: 0,
    inputSchema,
    examples: [{ type: 'json', data: { x: 2 } }],
    price(): number {
      capability.priced++;
      return 0.001;
    },
    handler(input: { data: unknown }) {
      capability.ran++;
      return Promise.resolve({ type: 'json', data: { doubled: (input.data as { x: number }).x * 2 } });
    },
  };
  return capability;
}

async function invokeError(url: string, capability: string, data: unknown): Promise<AcmpError> {
  const buyer = await createAcmpBuyer({ agentUrl: url });
  const error = await buyer
    .invoke({ task_id: newTaskId(), capability, input: { type: 'json', data }, max_price_cu: 1 })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(AcmpError);
  return error as AcmpError;
}

describe('a capability input schema (checked before pricing or work, Layer 1 §3.3 -32602)', () => {
  it.each([
    ['JSON Schema', { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] }],
    ['zod', z.object({ x: z.number() })],
  ] as const)(
    'refuses input failing a %s with -32602 and the reasons; nothing priced or run',
    async (_kind, schema) => {
      const capability = countingCapability(schema as AcmpCapability['inputSchema']);
      const host = await acmpHost({ capabilities: [capability] });
      const error = await invokeError(host.url, 'double', { x: 'two' });
      expect(error.code).toBe(-32602);
      const data = error.data as { capability: string; issues: { path: string; message: string }[] };
      expect(data.capability).toBe('double');
      expect(data.issues).toEqual([
        expect.objectContaining({
          path: '/input/data/x',
          message: expect.stringMatching(/number/) as unknown,
        }),
      ]);
      expect([capability.priced, capability.ran]).toEqual([0, 0]);
    },
  );

  it('runs input that passes the schema', async () => {
    const capability = countingCapability({
      type: 'object',
      properties: { x: { type: 'number' } },
      required: ['x'],
    });
    const host = await acmpHost({ capabilities: [capability] });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const result = await buyer.invoke({
      capability: 'double',
      input: { type: 'json', data: { x: 21 } },
      max_price_cu: 1,
    });
    expect(result.output?.data).toEqual({ doubled: 42 });
  });

  it('lists allowed values of an enum', async () => {
    const host = await acmpHost({
      capabilities: [
        {
          ...countingCapability({
            type: 'object',
            properties: { unit: { enum: ['cm', 'in'] } },
            required: ['unit'],
          }),
        },
      ],
    });
    const error = await invokeError(host.url, 'double', { unit: 'mm' });
    expect(JSON.stringify(error.data)).toContain('must be one of: \\"cm\\", \\"in\\"');
  });

  it("refuses slow-count's bad input ('abc') with -32602 naming what it expects, not -33099", async () => {
    const host = demoHost();
    const error = await invokeError(host.url, 'slow-count', 'abc');
    expect(error.code).toBe(-32602);
    expect((error.data as { detail: string }).detail).toMatch(/expected n, the number to count to/);
  });
});

describe('price and input on the card (docs/acmp-a2a-binding.md §1)', () => {
  it("puts each capability's price, input schema and examples on its skill", async () => {
    const host = demoHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const skill = buyer.card.skills.find((s) => s.id === 'slow-count')!;
    const info = readCapabilitySkill(skill);
    expect(info.price).toBe('0.0001 CU per step of n, at least 0.0001 CU; quoted (Layer 6) at 1 CU, any n');
    expect(info.inputSchema).toMatchObject({ anyOf: expect.any(Array) as unknown });
    expect(info.examples).toEqual([{ type: 'text', data: '5' }]);
    expect(info.summary).toMatch(/^Counts to n/);
  });

  it('a2a-commerce acmp capabilities prints prices, inputs and a command to try, which works', async () => {
    const host = demoHost();
    const listed = await runCliProcess(['acmp', 'capabilities', host.url]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/price: 0\.0001 CU per step of n/);
    expect(listed.stdout).toMatch(/input data: n, the number to count to/);
    const tryLine = /try: a2a-commerce (acmp invoke \S+ --capability slow-count .*)$/m.exec(listed.stdout);
    expect(tryLine).not.toBeNull();
    const args = [...tryLine![1]!.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
    const run = await runCliProcess(args);
    expect(run.stderr).not.toMatch(/error/);
    expect(JSON.parse(run.stdout)).toMatchObject({ output: { data: { count: 5 } } });
  });
});
