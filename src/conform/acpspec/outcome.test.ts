import { describe, expect, it } from 'vitest';
import { broken, clip, need, rule, steps } from './outcome.js';

describe('steps: how an ACPspec check ends', () => {
  it('passes when every step returns', async () => {
    expect(await steps(() => Promise.resolve())).toEqual({ status: 'pass' });
  });

  it('skips with the reason of an unmet precondition', async () => {
    const outcome = await steps(() => {
      need(false, 'the card lists no delta');
      return Promise.resolve();
    });
    expect(outcome).toEqual({ status: 'skip', evidence: 'the card lists no delta' });
  });

  it('fails with the evidence of a broken rule', async () => {
    expect(await steps(() => Promise.resolve(rule(false, 'expected an acp_ack')))).toEqual({
      status: 'fail',
      evidence: 'expected an acp_ack',
    });
    expect(await steps(() => Promise.resolve(broken('a delta')))).toMatchObject({ status: 'fail' });
  });

  it('reports any other error as a failure with its message, never its stack', async () => {
    const outcome = await steps(() => Promise.reject(new TypeError('fetch failed')));
    expect(outcome).toEqual({
      status: 'fail',
      evidence: 'the check could not complete: TypeError: fetch failed',
    });
  });

  it('bounds evidence', () => {
    expect(clip('x'.repeat(1000))).toHaveLength(400);
  });
});
