import { describe, expect, it } from 'vitest';
import { renderJunit, renderTable } from '../../src/conform/report.js';
import type { ConformReport } from '../../src/conform/runner.js';

/** A report with one result per status; `evidence` of the failure overrides the default. */
function report(evidence = 'seen <x> & "y"'): ConformReport {
  const base = { binding: 'acmp-a2a' as const, title: 'a rule', spec: 'seed 000 §1', durationMs: 5 };
  return {
    version: 1,
    agent: { url: 'http://agent.test', card: 'fetched' },
    budget: { maxSpendCu: 0, reservedCu: 0 },
    startedAt: '2026-12-02T00:00:00.000Z',
    durationMs: 15,
    summary: { pass: 1, fail: 1, skip: 1, total: 3 },
    results: [
      { ...base, id: 'a-pass', status: 'pass' },
      { ...base, id: 'a-fail', status: 'fail', evidence },
      { ...base, id: 'a-skip', status: 'skip', evidence: 'not served' },
    ],
  };
}

describe('renderJunit (docs/conformance.md "Output formats")', () => {
  it('escapes evidence for XML attributes and text', () => {
    const xml = renderJunit(report());
    expect(xml).toContain(
      '<failure message="seen &lt;x&gt; &amp; &quot;y&quot;" type="seed 000 §1">seen &lt;x&gt; &amp; &quot;y&quot;</failure>',
    );
  });

  it('drops the control characters XML 1.0 cannot carry', () => {
    expect(renderJunit(report('bad\u0000byte\u001b'))).toContain('message="badbyte"');
  });

  it('counts tests, failures and skips per suite and in all', () => {
    const xml = renderJunit(report());
    expect(xml).toContain('<testsuites name="a2a-commerce conform http://agent.test" tests="3" failures="1"');
    expect(xml).toContain(
      '<testsuite name="acmp-a2a" tests="3" failures="1" errors="0" skipped="1" time="0.015"',
    );
    expect(xml).toContain('<skipped message="not served"/>');
  });
});

describe('renderTable', () => {
  it('shows evidence under failures and reasons under skips, never under a pass', () => {
    const lines = renderTable(report('wrong')).split('\n');
    expect(lines).toContain('  PASS  a-pass  seed 000 §1');
    expect(lines).toContain('        ↳ wrong');
    expect(lines).toContain('        · not served');
    expect(lines.at(-1)).toBe('1 passed, 1 failed, 1 skipped of 3; budget 0 of 0 CU reserved');
  });
});

describe('a check over one transport (docs/conformance.md "ACMP checks", Transports)', () => {
  const over = (id: string, transport: 'JSONRPC' | 'GRPC') => ({
    id,
    binding: 'acmp-a2a' as const,
    transport,
    title: 'a rule',
    spec: 'seed 000 §1',
    durationMs: 1,
    status: 'pass' as const,
  });
  const transports: ConformReport = {
    ...report(),
    summary: { pass: 2, fail: 0, skip: 0, total: 2 },
    results: [over('a-rule', 'JSONRPC'), over('a-rule-grpc', 'GRPC')],
  };

  it('gets a table of its transport', () => {
    const lines = renderTable(transports).split('\n');
    expect(lines).toContain('ACMP over A2A (seed 000) — JSON-RPC');
    expect(lines.slice(lines.indexOf('ACMP over A2A (seed 000) — gRPC'))[1]).toBe(
      '  PASS  a-rule-grpc  seed 000 §1',
    );
  });

  it('names its transport in JUnit, one suite for the binding', () => {
    const xml = renderJunit(transports);
    expect(xml).toContain('<properties><property name="transport" value="GRPC"/></properties>');
    expect(xml).toContain('<system-out>over gRPC: a rule (seed 000 §1)</system-out>');
    expect(xml.match(/<testsuite /g)).toHaveLength(1);
  });
});
