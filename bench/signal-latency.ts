import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createAcmpProvider, LOCAL_SCOPE } from '../src/acmp/provider/provider.js';
import type { AcmpCapability } from '../src/acmp/provider/provider-types.js';
import { KyselyAcmpTaskStore, acmpMigrations } from '../src/storage/acmp/acmp-task-store-kysely.js';
import { openDatabase } from '../src/storage/sql/database.js';
import { migrateSets } from '../src/storage/sql/migrations.js';
import { quantile } from './stats.js';

/**
 * `tsx bench/signal-latency.ts [--pg URL] [--chunks N] [--tasks N]`: how long a chunk takes from the
 * host that runs a task to a follower on another host sharing PostgreSQL (the record's signals over
 * LISTEN/NOTIFY, docs/acmp-core.md "Signals"). Two providers with their own pools and LISTEN
 * connections; the owner stamps each chunk with its emit time; the follower measures on arrival.
 */
const { values } = parseArgs({
  options: {
    pg: { type: 'string' },
    chunks: { type: 'string', default: '50' },
    tasks: { type: 'string', default: '20' },
  },
});
const base = values.pg ?? process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const name = `a2ac_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
const chunkCount = Number(values.chunks);
const capability: AcmpCapability = {
  id: 'stamped',
  price: 0,
  handler: () =>
    (async function* () {
      for (let i = 0; i < chunkCount; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        yield { type: 'json', data: { at: performance.timeOrigin + performance.now() } };
      }
    })(),
};
const databases = [
  openDatabase({ url: url.toString(), dataDir: '.' }),
  openDatabase({ url: url.toString(), dataDir: '.' }),
];
try {
  await migrateSets(databases[0]!, [acmpMigrations]);
  const stores = databases.map((d) => new KyselyAcmpTaskStore(d));
  for (const s of stores) await s.open();
  const [owner, follower] = stores.map((store) =>
    createAcmpProvider({ capabilities: [capability], store, heartbeatIntervalMs: 1000 }),
  );
  const delays: number[] = [];
  for (let t = 0; t < Number(values.tasks); t++) {
    const params = {
      task_id: `task_sig_${t}_${Date.now()}`,
      capability: 'stamped',
      input: { type: 'text', data: 'x' },
      stream: true,
    };
    const running = owner!.invoke(params, { canStream: true, scope: LOCAL_SCOPE })[Symbol.asyncIterator]();
    await running.next();
    const drain = (async () => {
      for (let s = await running.next(); !s.done; s = await running.next());
    })();
    for await (const event of follower!.invoke(params, { canStream: true, scope: LOCAL_SCOPE })) {
      if (event.kind === 'chunk')
        delays.push(
          performance.timeOrigin + performance.now() - (event.params.chunk.data as { at: number }).at,
        );
    }
    await drain;
  }
  delays.sort((a, b) => a - b);
  const ms = (v: number): string => v.toFixed(2);
  process.stdout.write(
    `cross-host chunk delay over LISTEN/NOTIFY: n=${delays.length} p50 ${ms(quantile(delays, 0.5))} ms, p99 ${ms(quantile(delays, 0.99))} ms, max ${ms(delays.at(-1) ?? 0)} ms; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}\n`,
  );
  await owner!.close();
  await follower!.close();
  for (const s of stores) await s.close();
} finally {
  for (const d of databases) await d.close();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
