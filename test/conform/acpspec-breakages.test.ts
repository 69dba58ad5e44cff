import { afterEach, describe, expect, it } from 'vitest';
import { acpspecChecks } from '../../src/conform/acpspec/index.js';
import type { HostFlags } from '../../src/server/config.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { brokenAcpModule, type AcpBreakage } from './acp-fixture.js';
import { conformContext, idsWith, runChecks } from './acp-context.js';

afterEach(cleanup);

const TLS: HostFlags = { 'tls-self-signed': true };
const CLEARTEXT: HostFlags = { 'no-tls': true, 'no-personal-data': true };
const both = (rule: string): string[] => [`acpspec-a2a-${rule}`, `acpspec-https-${rule}`];

/** Each breakage and the checks it must fail — those of its rule, on every binding it reaches, and no other. */
const ONE_PART = 'acpspec-a2a-one-envelope-one-part';

const CASES: readonly { breakage: AcpBreakage; fails: string[]; flags?: HostFlags; evidence?: RegExp }[] = [
  { breakage: 'card-emits-empty', fails: ['acpspec-card-params'] },
  { breakage: 'schema-url-404', fails: ['acpspec-schema-url'] },
  { breakage: 'kind-undeclared', fails: both('kinds-honoured') },
  { breakage: 'two-envelopes-accepted', fails: [ONE_PART], evidence: /^two envelopes in one data part/ },
  { breakage: 'split-accepted', fails: [ONE_PART], evidence: /^two envelopes in two data parts/ },
  { breakage: 'flattened-accepted', fails: [ONE_PART], evidence: /^an envelope's header flattened/ },
  { breakage: 'partial-ingest', fails: both('invalid-rejected-whole'), evidence: /^a delta whose last/ },
  { breakage: 'partial-snapshot', fails: both('invalid-rejected-whole'), evidence: /^a schema-invalid/ },
  { breakage: 'parent-unknown-miscoded', fails: both('parent-unknown') },
  { breakage: 'state-delta', fails: both('state-snapshot') },
  { breakage: 'consent-upgrade', fails: both('consent-no-upgrade') },
  { breakage: 'event-rewritten', fails: both('events-append-only') },
  { breakage: 'https-bytes', fails: ['acpspec-bytes-identical'] },
  { breakage: 'pii-cleartext', fails: both('no-pii-cleartext'), flags: CLEARTEXT },
];

describe('each ACPspec check can fail (a fixture agent breaks one rule at a time)', () => {
  it.each(CASES)('$breakage fails exactly $fails', async ({ breakage, fails, flags, evidence }) => {
    // A fresh host per breakage: each is its own agent.
    const host = await startTestHost({
      flags: { 'no-tls': false, ...(flags ?? TLS) },
      dataDir: tempDir('a2ac-conform-'),
      modules: [brokenAcpModule(breakage)],
    });
    const outcomes = await runChecks(
      acpspecChecks,
      await conformContext(host.url, { caCert: host.tls?.cert }),
    );
    expect(idsWith(outcomes, 'fail').sort()).toEqual([...fails].sort());
    for (const id of fails) expect(outcomes.get(id)?.evidence).toMatch(evidence ?? /./);
  });
});
