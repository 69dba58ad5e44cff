import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAcpReceiver, type AcpReceiver } from '../src/acpspec/receiver.js';
import type { Envelope } from '../src/acpspec/envelope.js';
import { openDatabase } from '../src/storage/sql/database.js';
import { migrateSets } from '../src/storage/sql/migrations.js';
import {
  acpMigrations,
  createKyselyTransactionStore,
} from '../src/storage/acpspec/acp-transaction-store-kysely.js';
import { acpChain } from '../bench/workload.js';

/**
 * `tsx scripts/profile-acp.ts [--count N] [--concurrency C] [--chain L] [--profile FILE]`: the in-process
 * ACPspec workload of bench/acp-inprocess.ts (transactions of a snapshot and deltas appending one event,
 * ingested by the receiver over SQLite in WAL mode), measured after a warm-up. Prints the CPU time per
 * envelope (process.cpuUsage, less sensitive to a busy machine than wall time) beside the load average;
 * with `--profile`, writes a V8 CPU profile of the measured part only (no start-up, no warm-up).
 */
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '20000' },
    warmup: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '1' },
    chain: { type: 'string', default: '20' },
    profile: { type: 'string' },
  },
});
const concurrency = Number(values.concurrency);
const chainLength = Number(values.chain);

/** Envelopes for `concurrency` senders, whole transactions each, round-tripped through JSON as from the wire. */
function work(total: number): Envelope[][] {
  const perChain = Math.max(1, Math.ceil(total / concurrency / chainLength)) * chainLength;
  return Array.from({ length: concurrency }, () => {
    const chain = acpChain(chainLength);
    return Array.from({ length: perChain }, () => JSON.parse(JSON.stringify(chain.next())) as Envelope);
  });
}

async function ingestAll(receiver: AcpReceiver, envelopes: Envelope[][]): Promise<void> {
  await Promise.all(
    envelopes.map(async (chain) => {
      for (const envelope of chain) await receiver.ingest(envelope, { secure: true });
    }),
  );
}

const dir = mkdtempSync(join(tmpdir(), 'a2ac-profile-acp-'));
const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
try {
  await migrateSets(database, [acpMigrations]);
  const receiver = createAcpReceiver({
    store: createKyselyTransactionStore(database),
    accepts: ['snapshot', 'delta'],
    receiverAgentId: 'https://dealer.example/agents/acp',
    producer: { agent_id: 'https://dealer.example/agents/acp', role: 'dealer_agent' },
  });
  await ingestAll(receiver, work(Number(values.warmup)));
  const measured = work(Number(values.count));
  const session = new Session();
  if (values.profile) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  await ingestAll(receiver, measured);
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  if (values.profile) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(values.profile, JSON.stringify(profile));
    session.disconnect();
  }
  const count = measured.reduce((n, chain) => n + chain.length, 0);
  const line = `ACPspec in process c${concurrency}: ${count} envelopes, ${((used.user + used.system) / count).toFixed(1)} µs CPU each (user ${(used.user / count).toFixed(1)}, system ${(used.system / count).toFixed(1)}), ${Math.round((count / elapsed) * 1000)}/s wall, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
  process.stdout.write(`${line}\n`);
} finally {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
}
