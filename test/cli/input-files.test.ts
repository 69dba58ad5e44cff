import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { invokeInputFromFlags } from '../../src/cli/acmp.js';
import { agreementInvokeFromFlags, readAgreementFile } from '../../src/cli/acmp-negotiate.js';
import { readPayoutFile } from '../../src/cli/escrow-payout.js';
import { UsageError } from '../../src/cli/io.js';
import { cleanup, tempDir } from '../helpers/cleanup.js';

afterEach(cleanup);

function file(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

describe('CLI input decoded through the wire schemas', () => {
  it('refuses a payout file whose entries are not payout entries, naming the file', () => {
    const path = file('payout.json', '{"payout": [{"rail": 7}]}');
    expect(() => readPayoutFile(path)).toThrow(UsageError);
    expect(() => readPayoutFile(path)).toThrow(/payout\.json: expected/);
  });

  it('refuses a payout file that is JSON but not an object or list', () => {
    expect(() => readPayoutFile(file('payout.json', 'null'))).toThrow(/expected \{"payout"/);
  });

  it('reads a payout file in both spellings, extra entry fields kept', () => {
    const entry = { rail: 'credit-ledger', account: 'agent:p', note: { n: 1 } };
    expect(readPayoutFile(file('a.json', JSON.stringify({ payout: [entry] })))).toEqual([entry]);
    expect(readPayoutFile(file('b.json', JSON.stringify([entry])))).toEqual([entry]);
  });

  it('refuses an agreement file that is not an agreement', () => {
    const path = file('agreement.json', '{"agent_url": 5}');
    expect(() => readAgreementFile(path)).toThrow(/is not an agreement written by "acmp negotiate"/);
  });

  it('refuses --input-type json input that is not JSON with a usage error', () => {
    const flags = { capability: 'echo', input: '{"a":', 'input-type': 'json', 'max-price': '1' };
    expect(() => invokeInputFromFlags(flags)).toThrow(UsageError);
  });

  it('decodes --input-type json input as the payload data', () => {
    const flags = { capability: 'echo', input: '{"a":[1,"x"]}', 'input-type': 'json', 'max-price': '1' };
    expect(invokeInputFromFlags(flags).input).toEqual({ type: 'json', data: { a: [1, 'x'] } });
    const agreement = { input: undefined } as unknown as Parameters<typeof agreementInvokeFromFlags>[1];
    expect(() => agreementInvokeFromFlags({ input: '[1,', 'input-type': 'json' }, agreement)).toThrow(
      '--input is not valid JSON',
    );
  });
});
