import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { allChecks } from '../conform/checks.js';
import { renderJunit, renderTable } from '../conform/report.js';
import { runConformance } from '../conform/runner.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { UsageError, type CliIo } from './io.js';

export const CONFORM_USAGE = `Usage: a2a-commerce conform <agent-url> [--max-spend <cu>] [--token <t>] [--only <id,…>]
       [--capability <id>] [--timeout-ms <n>] [--json] [--junit <file>] [--ca <pem>] [--data-dir <dir>]

Checks an agent black-box against the ACMP and ACPspec bindings (docs/conformance.md); the ACMP-over-A2A
checks run once per transport the card lists (ids end in -rest for HTTP+JSON, -grpc for gRPC). --max-spend is the
CU the kit may spend on paid invokes (default 0: only checks that cannot spend run); --capability names the
ACMP capability those invokes use (default: the card's first with an example input); --only runs the listed
check ids; --timeout-ms bounds each network step (default 10000); --json prints the report as JSON;
--junit writes JUnit XML to <file>. Exit code: 0 all ran checks passed, 1 a check failed, 2 usage error or
no agent card.`;

/** A non-negative number flag, or a usage error naming it. */
function numberFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${name} must be a non-negative number, got "${value}"`);
  return n;
}

/** `a2a-commerce conform <url>`. */
export async function conform(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'max-spend': { type: 'string' },
      token: { type: 'string' },
      only: { type: 'string' },
      capability: { type: 'string' },
      'timeout-ms': { type: 'string' },
      json: { type: 'boolean' },
      junit: { type: 'string' },
      ca: { type: 'string' },
      'data-dir': { type: 'string' },
    },
    allowPositionals: true,
  });
  const [url, extra] = positionals;
  if (!url || extra !== undefined) throw new UsageError('conform takes exactly one <agent-url>');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`"${url}" is not an http(s) URL`);
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const known = new Set(allChecks.map((c) => c.id));
  const unknown = (only ?? []).filter((id) => !known.has(id));
  if (unknown.length) throw new UsageError(`unknown check id: ${unknown.join(', ')}`);
  const timeoutMs = numberFlag('timeout-ms', values['timeout-ms']);
  if (timeoutMs === 0) throw new UsageError('--timeout-ms must be positive');
  const token = tokenFromFlags(values, io.env);
  const caCert = caFromFlags(values, io.env);
  const report = await runConformance({
    url,
    maxSpendCu: numberFlag('max-spend', values['max-spend']) ?? 0,
    ...(token ? { token } : {}),
    ...(only ? { only } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(caCert ? { caCert } : {}),
    ...(values.capability ? { acmpCapability: values.capability } : {}),
  });
  if (values.junit) writeFileSync(values.junit, renderJunit(report));
  io.out(values.json ? JSON.stringify(report, null, 2) : renderTable(report));
  if (report.agent.card === 'unreachable') return 2;
  return report.summary.fail > 0 ? 1 : 0;
}
