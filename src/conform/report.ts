import type { ConformBinding, ConformTransport } from './check.js';
import type { ConformReport, ReportedCheck } from './runner.js';

/**
 * The report's renderings: a table per binding and transport, JUnit XML (docs/conformance.md "Output
 * formats").
 */

const BINDING_TITLE: Record<ConformBinding, string> = {
  'acmp-a2a': 'ACMP over A2A (seed 000)',
  'acmp-mcp': 'ACMP over MCP',
  'acpspec-a2a': 'ACPspec over A2A (seed 001)',
  'acpspec-https': 'ACPspec over HTTPS (seed 001)',
  a2a: 'A2A',
};

const TRANSPORT_TITLE: Record<ConformTransport, string> = {
  JSONRPC: 'JSON-RPC',
  'HTTP+JSON': 'HTTP+JSON',
  GRPC: 'gRPC',
};

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'skip' } as const;

/** Results grouped by a key, groups in the order of their first result. */
function groupBy(
  results: readonly ReportedCheck[],
  key: (r: ReportedCheck) => string,
): Map<string, ReportedCheck[]> {
  const groups = new Map<string, ReportedCheck[]>();
  for (const r of results) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  return groups;
}

/** A table's heading: the binding, and the transport its checks called. */
function heading(r: ReportedCheck): string {
  const title = BINDING_TITLE[r.binding];
  return r.transport ? `${title} — ${TRANSPORT_TITLE[r.transport]}` : title;
}

/**
 * The human report: one table per binding and transport (status, check id, spec reference), evidence
 * under a failure.
 */
export function renderTable(report: ConformReport): string {
  const lines: string[] = [`Conformance of ${report.agent.url}`];
  if (report.agent.problem) lines.push(`agent card: ${report.agent.problem}`);
  for (const [title, results] of groupBy(report.results, heading)) {
    const idWidth = Math.max(...results.map((r) => r.id.length));
    lines.push('', title);
    for (const r of results) {
      lines.push(`  ${MARK[r.status]}  ${r.id.padEnd(idWidth)}  ${r.spec}`);
      if (r.status !== 'pass' && r.evidence)
        lines.push(`        ${r.status === 'fail' ? '↳' : '·'} ${r.evidence}`);
    }
  }
  const s = report.summary;
  lines.push(
    '',
    `${s.pass} passed, ${s.fail} failed, ${s.skip} skipped of ${s.total}; ` +
      `budget ${report.budget.reservedCu} of ${report.budget.maxSpendCu} CU reserved`,
  );
  return lines.join('\n');
}

function xml(text: string): string {
  return (
    text
      // XML 1.0 allows no control characters but tab, LF and CR.
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}

/**
 * JUnit XML: one `<testsuite>` per binding, one `<testcase>` per check (`name` = check id, `classname` =
 * binding, the transport as a `transport` property), `<failure>` with the evidence, `<skipped>` with the
 * reason; the title and spec reference in `<system-out>`.
 */
export function renderJunit(report: ConformReport): string {
  const suites = [...groupBy(report.results, (r) => r.binding)].map(([binding, results]) => {
    const count = (s: string): number => results.filter((r) => r.status === s).length;
    const time = results.reduce((t, r) => t + r.durationMs, 0) / 1000;
    const cases = results.map((r) => {
      const head = `    <testcase name="${xml(r.id)}" classname="${xml(binding)}" time="${r.durationMs / 1000}">`;
      const body =
        r.status === 'fail'
          ? `      <failure message="${xml(r.evidence ?? 'failed')}" type="${xml(r.spec)}">${xml(r.evidence ?? '')}</failure>`
          : r.status === 'skip'
            ? `      <skipped message="${xml(r.evidence ?? 'skipped')}"/>`
            : undefined;
      const props = r.transport
        ? [`      <properties><property name="transport" value="${xml(r.transport)}"/></properties>`]
        : [];
      const over = r.transport ? `over ${TRANSPORT_TITLE[r.transport]}: ` : '';
      const out = `      <system-out>${xml(`${over}${r.title} (${r.spec})`)}</system-out>`;
      return [head, ...props, ...(body ? [body] : []), out, '    </testcase>'].join('\n');
    });
    return [
      `  <testsuite name="${xml(binding)}" tests="${results.length}" failures="${count('fail')}" errors="0" skipped="${count('skip')}" time="${time}" timestamp="${xml(report.startedAt.replace(/Z$/, ''))}">`,
      ...cases,
      '  </testsuite>',
    ].join('\n');
  });
  const s = report.summary;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="a2a-commerce conform ${xml(report.agent.url)}" tests="${s.total}" failures="${s.fail}" errors="0" skipped="${s.skip}" time="${report.durationMs / 1000}">`,
    ...suites,
    '</testsuites>',
    '',
  ].join('\n');
}
