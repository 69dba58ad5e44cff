import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { checkDag } from '../acmp/dag/dag-check.js';
import { DagError, type DagProblem } from '../acmp/dag/dag-errors.js';
import type { DagRunResult } from '../acmp/dag/dag-events.js';
import type { DagRunStore } from '../acmp/dag/dag-ports.js';
import { DagRunner, type FailurePolicy } from '../acmp/dag/dag-runner.js';
import { MemoryDagRunStore } from '../storage/memory/dag-run-store-memory.js';
import { DAG_BINDINGS, type DagBinding } from '../acmp/dag/dag-model.js';
import { checkRunTerms, type RunTerms } from '../acmp/dag/run-checks.js';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import { ConnectDagBuyerPort } from '../connect/dag-buyer.js';
import { openDatabase } from '../storage/sql/database.js';
import { dagMigrations, KyselyDagRunStore } from '../storage/dag/dag-run-store-kysely.js';
import { migrateSets } from '../storage/sql/migrations.js';
import { createDagProgressView } from './acmp-dag-progress.js';
import { progressIsTty } from './acmp-progress.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { UsageError, type CliIo } from './io.js';
import { walletFromFlags } from './wallet.js';

export const DAG_USAGE = `  a2a-commerce acmp dag validate <dag.json> [--budget <cu>] [--provider <agent-url>] [--binding <b>] [--json]
  a2a-commerce acmp dag run <dag.json> [--run-id <id>] [--db <url>] [--max-parallel <n>]
      [--policy fail-fast|best-effort] [--budget <cu>] [--deadline <ms>] [--provider <agent-url>]
      [--binding JSONRPC|HTTP+JSON|GRPC|MCP] [--json] [--token <t>] [--data-dir <dir> | --ca <pem>]
      [--wallet-limits <file>]

dag           runs a Layer 2 task DAG across providers (docs/acmp-dag.md): validate refuses a bad DAG
              with the exact reason; run buys each node where its "provider" (or --provider) points, as
              soon as its inputs are ready, within --budget, over its "binding" (or --binding; default:
              the card's first interface, else MCP); --db makes the run resumable by --run-id;
              Ctrl-C cancels the run (no new node starts, nodes in flight get acmp/cancel).`;

const OPTIONS = {
  'run-id': { type: 'string' },
  db: { type: 'string' },
  'max-parallel': { type: 'string' },
  policy: { type: 'string' },
  budget: { type: 'string' },
  deadline: { type: 'string' },
  provider: { type: 'string' },
  binding: { type: 'string' },
  json: { type: 'boolean' },
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  ca: { type: 'string' },
  'wallet-limits': { type: 'string' },
} as const;

type Values = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
}

/** `a2a-commerce acmp dag <validate|run> <dag.json> …` (docs/acmp-dag.md). */
export async function dag(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'run' && sub !== 'validate')
    throw new UsageError(
      sub === undefined ? 'acmp dag needs run or validate' : `unknown acmp dag subcommand "${sub}"`,
    );
  const { values, positionals } = parse(rest);
  const [file, extra] = positionals;
  if (file === undefined || extra !== undefined) throw new UsageError('expected exactly one <dag.json>');
  const document = readDocument(file);
  if (sub === 'validate') return validate(document, values, io);
  return run(document, values, io);
}

function readDocument(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
}

function terms(values: Values): RunTerms {
  const budget = values.budget === undefined ? undefined : Number(values.budget);
  if (budget !== undefined && (!Number.isFinite(budget) || budget < 0))
    throw new UsageError('--budget must be a non-negative number of CU');
  const binding = values.binding;
  if (binding !== undefined && !isDagBinding(binding))
    throw new UsageError(`--binding must be one of ${DAG_BINDINGS.join(', ')}`);
  return {
    ...(budget !== undefined ? { budgetCu: budget } : {}),
    ...(values.provider !== undefined ? { defaultProvider: values.provider } : {}),
    ...(binding !== undefined ? { defaultBinding: binding } : {}),
  };
}

function isDagBinding(value: string): value is DagBinding {
  return DAG_BINDINGS.some((binding) => binding === value);
}

/** Prints a refusal: one line per problem, with its code and where it is. */
function printProblems(problems: readonly DagProblem[], io: CliIo, json: boolean | undefined): void {
  if (json) io.out(JSON.stringify({ ok: false, problems }));
  for (const p of problems) io.err(`${p.code}${p.path ? ` at ${p.path}` : ''}: ${p.message}`);
}

function validate(document: unknown, values: Values, io: CliIo): number {
  const checked = checkDag(document);
  const problems = checked.ok ? checkRunTerms(checked.plan, terms(values)) : checked.problems;
  if (problems.length > 0) {
    printProblems(problems, io, values.json);
    return 1;
  }
  if (values.json) io.out(JSON.stringify({ ok: true }));
  else io.out('the DAG is valid');
  return 0;
}

function intFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer`);
  return n;
}

function policyOf(value: string | undefined): FailurePolicy {
  if (value === undefined) return 'fail-fast';
  if (value !== 'fail-fast' && value !== 'best-effort')
    throw new UsageError('--policy must be fail-fast or best-effort');
  return value;
}

/** The run store: `--db` (SQLite or PostgreSQL, migrated here) makes a run resumable; memory otherwise. */
async function openStore(
  url: string | undefined,
): Promise<{ store: DagRunStore; close: () => Promise<void> }> {
  if (url === undefined) return { store: new MemoryDagRunStore(), close: () => Promise.resolve() };
  const database = openDatabase({ url, dataDir: '.' });
  try {
    await migrateSets(database, [dagMigrations]);
  } catch (error) {
    await database.close();
    throw error;
  }
  return { store: new KyselyDagRunStore(database), close: () => database.close() };
}

async function run(document: unknown, values: Values, io: CliIo): Promise<number> {
  const maxParallel = intFlag(values['max-parallel'], 'max-parallel');
  const deadlineMs = intFlag(values.deadline, 'deadline');
  const policy = policyOf(values.policy);
  const runId = values['run-id'] ?? `run_${crypto.randomUUID()}`;
  // Refused before anything is opened, connected or spent (Layer 2 §3 constraints, the budget).
  const checked = checkDag(document);
  const problems = checked.ok ? checkRunTerms(checked.plan, terms(values)) : checked.problems;
  if (problems.length > 0) {
    printProblems(problems, io, values.json);
    return 1;
  }
  const interrupt = new AbortController();
  const opened = await openStore(values.db);
  const wallet = await walletFromFlags(values, io.env);
  const port = new ConnectDagBuyerPort({
    token: tokenFromFlags(values, io.env),
    caCert: caFromFlags(values, io.env),
    ...(wallet ? { wallet: wallet.wallet } : {}),
  });
  const tty = !values.json && progressIsTty(io);
  const view = createDagProgressView(io, { tty, nodes: nodeIds(document) });
  // Ctrl-C cancels the whole DAG: no new node starts; nodes in flight get acmp/cancel (Layer 2 §4).
  const onSigint = (): void => interrupt.abort(new AcmpError(ACMP_CODE.cancelled, { reason: 'interrupted' }));
  process.once('SIGINT', onSigint);
  if (!values.json) io.err(`run ${runId}${values.db === undefined ? ' (not resumable: no --db)' : ''}`);
  try {
    const result = await new DagRunner(document, {
      runId,
      store: opened.store,
      port,
      terms: terms(values),
      policy,
      ...(maxParallel !== undefined ? { maxParallel } : {}),
      signal:
        deadlineMs === undefined
          ? interrupt.signal
          : AbortSignal.any([interrupt.signal, AbortSignal.timeout(deadlineMs)]),
      onEvent: (event) => (values.json ? io.out(JSON.stringify({ event })) : view.update(event)),
    }).run();
    view.done();
    printResult(result, io, values.json);
    return result.state === 'completed' ? 0 : 1;
  } catch (error) {
    view.done();
    if (!(error instanceof DagError)) throw error;
    printProblems(error.problems, io, values.json);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await port.close();
    await wallet?.close();
    await opened.close();
  }
}

function nodeIds(document: unknown): string[] {
  const checked = checkDag(document);
  return checked.ok ? [...checked.plan.order] : [];
}

function printResult(result: DagRunResult, io: CliIo, json: boolean | undefined): void {
  if (json) {
    io.out(JSON.stringify({ result }));
    return;
  }
  io.out(`run ${result.runId}: ${result.state}, ${result.totalCostCu} CU of a ${result.budgetCu} CU budget`);
  for (const [id, node] of Object.entries(result.nodes)) io.out(`  ${id}: ${node.state}`);
  io.out(JSON.stringify(result.result, null, 2));
}
