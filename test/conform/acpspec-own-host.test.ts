import { afterAll, describe, expect, it } from 'vitest';
import { acpspecChecks } from '../../src/conform/acpspec/index.js';
import { startAcpHost } from '../acpspec/helpers.js';
import { cleanup, startTestHost } from '../helpers/host.js';
import { conformContext, idsWith, runChecks } from './acp-context.js';

afterAll(cleanup);

describe('the ACPspec checks against our own host (seed 001 "The Conformance Rule")', () => {
  it('pass over self-signed TLS, the cleartext checks skipping with their reason', async () => {
    const host = await startAcpHost();
    const outcomes = await runChecks(acpspecChecks, await conformContext(host.url, { caCert: host.caCert }));
    expect(Object.fromEntries([...outcomes].filter(([, o]) => o.status === 'fail'))).toEqual({});
    expect(idsWith(outcomes, 'skip').sort()).toEqual([
      'acpspec-a2a-no-pii-cleartext',
      'acpspec-https-no-pii-cleartext',
    ]);
    expect(outcomes.get('acpspec-https-no-pii-cleartext')?.evidence).toMatch(/reached over TLS/);
    expect(idsWith(outcomes, 'pass')).toHaveLength(acpspecChecks.length - 2);
  });

  it('pass every check over cleartext HTTP with --no-personal-data, personal data refused', async () => {
    const host = await startAcpHost({ flags: { 'no-tls': true, 'no-personal-data': true } });
    const outcomes = await runChecks(acpspecChecks, await conformContext(host.url));
    expect(Object.fromEntries([...outcomes].filter(([, o]) => o.status !== 'pass'))).toEqual({});
  });

  it('pass behind bearer authentication when given the token', async () => {
    const token = 'conform-token-0123456789abcdef';
    const host = await startAcpHost({ flags: { 'tls-self-signed': true, token: [token] } });
    const outcomes = await runChecks(
      acpspecChecks,
      await conformContext(host.url, { caCert: host.caCert, token }),
    );
    expect(idsWith(outcomes, 'fail')).toEqual([]);
    expect(idsWith(outcomes, 'pass')).toHaveLength(acpspecChecks.length - 2);
  });

  it('skip, each with its reason, against an agent that does not serve ACPspec', async () => {
    const host = await startTestHost();
    const outcomes = await runChecks(acpspecChecks, await conformContext(host.url));
    expect(idsWith(outcomes, 'skip')).toHaveLength(acpspecChecks.length);
    for (const [, outcome] of outcomes) expect(outcome.evidence).toMatch(/lists no https:\/\/acpspec\.org/);
  });
});
