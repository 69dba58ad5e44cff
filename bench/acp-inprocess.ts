import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAcpReceiver, type AcpReceiver } from '../src/acpspec/receiver.js';
import type { Envelope } from '../src/acpspec/envelope.js';
import { openDatabase, type Database } from '../src/storage/sql/database.js';
import { migrateSets } from '../src/storage/sql/migrations.js';
import {
  acpMigrations,
  createKyselyTransactionStore,
  type KyselyTransactionStore,
} from '../src/storage/acpspec/acp-transaction-store-kysely.js';
import { freshPg, pgBackendCpuUs } from './pg-procs.js';
import type { LoadResult } from './protocol.js';
import { acpChain } from './workload.js';

/**
 * ACPspec in process, in its own process: validate + apply delta + consent + persist through the receiver
 * over SQLite (WAL) or PostgreSQL. `concurrency` chains ingest at once, each one envelope after another
 * (1: the sequential figure; 16: what group commit is for). `chainLength` envelopes per transaction (20, or
 * 1,000 for the long-transaction scenario, which also measures CPU per envelope at the start and at the end
 * of each transaction and the time of a state request for it). Envelopes are built before timing starts.
 */
export interface InProcessSpec {
  store: 'sqlite' | 'postgres';
  pgUrl?: string;
  warmup: number;
  count: number;
  concurrency?: number;
  chainLength?: number;
  /** Group-commit lanes and batch size (default: the store's for the dialect). */
  lanes?: number;
  maxBatch?: number;
}

/** What the long-transaction scenario adds to a run's result. */
export interface LongTransactionFigures {
  /** CPU µs per envelope over envelopes 1–100 and 901–1,000 of each transaction (mean over transactions). */
  firstCpuUs: number;
  lastCpuUs: number;
  /** A state request for a finished 1,000-envelope transaction: answered from this receiver's memory, and by a receiver that does not hold it (reads the store). */
  stateWarmMs: number;
  stateColdMs: number;
}

export type InProcessResult = LoadResult & {
  cpuUs: number;
  meanBatch: number;
  /** CPU of the PostgreSQL backends serving this run's database (Linux /proc), in µs; NaN elsewhere. */
  pgCpuUs: number;
  long?: LongTransactionFigures;
};

function receiverOn(
  database: Database,
  groupCommit: { lanes?: number; maxBatch?: number } = {},
): AcpReceiver & { store: KyselyTransactionStore } {
  const store = createKyselyTransactionStore(database, {
    groupCommit: {
      ...(groupCommit.lanes ? { lanes: groupCommit.lanes } : {}),
      ...(groupCommit.maxBatch ? { maxBatch: groupCommit.maxBatch } : {}),
    },
  });
  const receiver = createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: 'https://dealer.example/agents/acp',
    producer: { agent_id: 'https://dealer.example/agents/acp', role: 'dealer_agent' },
  });
  return Object.assign(receiver, { store });
}

/** `count` envelopes from `chains` chains (round-robin is irrelevant: each worker sends its own in order). */
function build(chains: number, perChain: number, chainLength: number): Envelope[][] {
  return Array.from({ length: chains }, () => {
    const chain = acpChain(chainLength);
    // Round-trip through JSON, as an envelope arrives from the wire.
    return Array.from({ length: perChain }, () => JSON.parse(JSON.stringify(chain.next())) as Envelope);
  });
}

async function measure(
  receiver: AcpReceiver,
  work: Envelope[][],
  chainLength: number,
): Promise<InProcessResult> {
  const latencies: number[] = [];
  const windows = { first: 0, firstN: 0, last: 0, lastN: 0 };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    work.map(async (envelopes) => {
      let windowStart = process.cpuUsage();
      for (const [i, envelope] of envelopes.entries()) {
        const position = i % chainLength;
        if (position === 0 || position === chainLength - 100) windowStart = process.cpuUsage();
        const t = performance.now();
        await receiver.ingest(envelope, { secure: true });
        latencies.push(performance.now() - t);
        const used = (): number => {
          const d = process.cpuUsage(windowStart);
          return d.user + d.system;
        };
        if (chainLength >= 200 && position === 99) {
          windows.first += used();
          windows.firstN += 100;
        }
        if (chainLength >= 200 && position === chainLength - 1) {
          windows.last += used();
          windows.lastN += 100;
        }
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const count = work.reduce((n, w) => n + w.length, 0);
  latencies.sort((a, b) => a - b);
  const result: InProcessResult = {
    count,
    elapsedMs,
    latencies,
    events: count,
    errors: 0,
    cpuUs: used.user + used.system,
    meanBatch: NaN,
    pgCpuUs: NaN,
  };
  if (windows.firstN > 0 && windows.lastN > 0) {
    result.long = {
      firstCpuUs: windows.first / windows.firstN,
      lastCpuUs: windows.last / windows.lastN,
      stateWarmMs: NaN,
      stateColdMs: NaN,
    };
  }
  return result;
}

/** Median time of `n` state requests. */
async function stateMs(receiver: AcpReceiver, transactionId: string, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await receiver.state(transactionId);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(n / 2)]!;
}

async function run(spec: InProcessSpec): Promise<InProcessResult> {
  const dir = mkdtempSync(join(tmpdir(), 'a2ac-bench-acp-'));
  const pgDb = spec.store === 'postgres' ? await freshPg(spec.pgUrl!) : undefined;
  const database: Database = openDatabase({
    url: pgDb?.url ?? `sqlite:${join(dir, 'acp.sqlite')}`,
    dataDir: dir,
    poolSize: 10,
  });
  try {
    await migrateSets(database, [acpMigrations]);
    const receiver = receiverOn(database, {
      ...(spec.lanes ? { lanes: spec.lanes } : {}),
      ...(spec.maxBatch ? { maxBatch: spec.maxBatch } : {}),
    });
    const concurrency = spec.concurrency ?? 1;
    const chainLength = spec.chainLength ?? 20;
    const per = (n: number): number => Math.max(1, Math.ceil(n / concurrency / chainLength)) * chainLength;
    for (const envelopes of build(concurrency, per(spec.warmup), chainLength)) {
      for (const envelope of envelopes) await receiver.ingest(envelope, { secure: true });
    }
    const work = build(concurrency, per(spec.count), chainLength);
    const before = receiver.store.groupCommitStats;
    const pgName = pgDb ? new URL(pgDb.url).pathname.slice(1) : undefined;
    const pgBefore = pgName ? pgBackendCpuUs(pgName) : NaN;
    const result = await measure(receiver, work, chainLength);
    result.pgCpuUs = pgName ? pgBackendCpuUs(pgName) - pgBefore : NaN;
    const after = receiver.store.groupCommitStats;
    result.meanBatch = (after.items - before.items) / Math.max(1, after.batches - before.batches);
    if (result.long) {
      const finished = [...new Set(work.flat().map((e) => e.transaction_id))];
      result.long.stateWarmMs = await stateMs(receiver, finished[finished.length - 1]!, 21);
      // From the store: a receiver that holds none of them reads each (its code and compiled statements warmed on
      // the first, which is not timed), as a long-running host does for a transaction it does not hold.
      const reader = receiverOn(database);
      const cold: number[] = [];
      for (const id of finished) cold.push(await stateMs(reader, id, 1));
      result.long.stateColdMs =
        cold.length > 1 ? cold.slice(1).sort((a, b) => a - b)[Math.floor((cold.length - 1) / 2)]! : cold[0]!;
    }
    return result;
  } finally {
    await database.close();
    await pgDb?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const spec = JSON.parse(process.argv[2] ?? '{}') as InProcessSpec;
run(spec).then(
  (result) => {
    // Run by hand (e.g. under --cpu-prof) there is no IPC channel: print a summary instead.
    if (process.send) process.send({ type: 'result', result });
    else {
      const long = result.long
        ? `; CPU per envelope 1–100 ${Math.round(result.long.firstCpuUs)} µs, 901–1000 ${Math.round(result.long.lastCpuUs)} µs; state ${result.long.stateWarmMs.toFixed(2)} ms held, ${result.long.stateColdMs.toFixed(2)} ms from the store`
        : '';
      console.log(
        `${Math.round((result.count / result.elapsedMs) * 1000)} envelopes/s, ${Math.round(result.cpuUs / result.count)} µs CPU each${Number.isNaN(result.pgCpuUs) ? '' : ` (+ ${Math.round(result.pgCpuUs / result.count)} µs in PostgreSQL)`}, mean batch ${result.meanBatch.toFixed(1)}${long}`,
      );
    }
  },
  (error: unknown) => {
    if (process.send)
      process.send({
        type: 'error',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    else console.error(error);
  },
);
