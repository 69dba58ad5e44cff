import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createAcpReceiver } from '../src/acpspec/receiver.js';
import type { Envelope } from '../src/acpspec/envelope.js';
import { openDatabase, type Database } from '../src/storage/database.js';
import { migrateSets } from '../src/storage/migrations.js';
import { acpMigrations, KyselyTransactionStore } from '../src/storage/acp-transaction-store-kysely.js';
import type { LoadResult } from './protocol.js';
import { acpChain } from './workload.js';

/**
 * ACPspec in process, in its own process: validate + apply delta + consent + persist, one envelope after
 * another through the receiver over SQLite (WAL) or PostgreSQL. Envelopes are built before timing starts.
 */
export interface InProcessSpec {
  store: 'sqlite' | 'postgres';
  pgUrl?: string;
  warmup: number;
  count: number;
}

async function freshPg(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `a2ac_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

async function run(spec: InProcessSpec): Promise<LoadResult & { cpuUs: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'a2ac-bench-acp-'));
  const pgDb = spec.store === 'postgres' ? await freshPg(spec.pgUrl!) : undefined;
  const database: Database = openDatabase({ url: pgDb?.url ?? `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
  try {
    await migrateSets(database, [acpMigrations]);
    const receiver = createAcpReceiver({
      store: new KyselyTransactionStore(database.db),
      accepts: ['snapshot', 'delta'],
      receiverAgentId: 'https://dealer.example/agents/acp',
      producer: { agent_id: 'https://dealer.example/agents/acp', role: 'dealer_agent' },
    });
    const chain = acpChain();
    // Round-trip through JSON, as an envelope arrives from the wire.
    const build = (n: number): unknown[] => Array.from({ length: n }, () => JSON.parse(JSON.stringify(chain.next())) as Envelope);
    for (const envelope of build(spec.warmup)) await receiver.ingest(envelope, { secure: true });
    const envelopes = build(spec.count);
    const latencies: number[] = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const envelope of envelopes) {
      const t = performance.now();
      await receiver.ingest(envelope, { secure: true });
      latencies.push(performance.now() - t);
    }
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    latencies.sort((a, b) => a - b);
    return { count: spec.count, elapsedMs, latencies, events: spec.count, errors: 0, cpuUs: used.user + used.system };
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
    else console.log(`${Math.round((result.count / result.elapsedMs) * 1000)} envelopes/s, ${Math.round(result.cpuUs / result.count)} µs CPU each`);
  },
  (error: unknown) => process.send?.({ type: 'error', message: error instanceof Error ? error.stack ?? error.message : String(error) }),
);
