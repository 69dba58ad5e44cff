import { afterEach, describe, expect, it } from 'vitest';
import { createAcpReceiver, type AcpReceiver } from '../../acpspec/receiver.js';
import type { TransactionCommitted, TransactionStore } from '../../acpspec/transaction-store.js';
import {
  anonymousState,
  delta,
  eventOp,
  RECEIVER_AGENT_ID,
  snapshot,
} from '../../../test/helpers/acp-builders.js';
import { cleanup, onCleanup, tempDir } from '../../../test/helpers/host.js';
import { freshPgDatabase } from '../../../test/helpers/pg.js';
import { openDatabase, type Database } from '../sql/database.js';
import { migrateSets } from '../sql/migrations.js';
import { MemoryTransactionStore } from '../memory/acp-transaction-store-memory.js';
import { acpMigrations, KyselyTransactionStore } from './acp-transaction-store-kysely.js';

afterEach(cleanup);

const tls = { secure: true };
/** A follower that would poll only once an hour: what it sees in a test came from a commit signal. */
const NEVER_POLLS = 3_600_000;

function receiverOn(store: TransactionStore): AcpReceiver {
  return createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
  });
}

async function opened(url: string): Promise<Database> {
  const database = openDatabase({ url, dataDir: tempDir('acp-signals-') });
  onCleanup(() => database.close());
  await migrateSets(database, [acpMigrations]);
  return database;
}

/** An opened Kysely store on `database` (its LISTEN connection on PostgreSQL), closed by the cleanup. */
async function storeOn(database: Database): Promise<KyselyTransactionStore> {
  const store = new KyselyTransactionStore(database);
  await store.open();
  onCleanup(() => store.close());
  return store;
}

/** Resolves with the first commit `store` reports that `accept` accepts. */
function nextCommit(
  store: TransactionStore,
  accept: (c: TransactionCommitted) => boolean = () => true,
): Promise<TransactionCommitted> {
  return new Promise((resolve) => {
    const stop = store.watchCommits((c) => {
      if (!accept(c)) return;
      stop();
      resolve(c);
    });
  });
}

/** The event after seq 1 that `reader` follows while `write` runs. */
async function followedWhile(reader: AcpReceiver, write: () => Promise<unknown>): Promise<string> {
  const stop = new AbortController();
  try {
    for await (const event of reader.follow('tx-1', { signal: stop.signal, pollMs: NEVER_POLLS })) {
      if (event.seq === 1) await write();
      else return event.event_id;
    }
  } finally {
    stop.abort();
  }
  throw new Error('the follower ended');
}

describe('TransactionStore.watchCommits (docs/acpspec-mcp.md "Subscriptions")', () => {
  const stores = {
    memory: () => Promise.resolve(new MemoryTransactionStore()),
    SQLite: async () => storeOn(await opened(`sqlite:${tempDir('acp-signals-')}/acp.sqlite`)),
  };

  it.each(Object.entries(stores))('reports each commit once, a replay never (%s)', async (_, make) => {
    const store = await make();
    const receiver = receiverOn(store);
    const seen: TransactionCommitted[] = [];
    store.watchCommits((c) => seen.push(c));
    const s = snapshot({ state: anonymousState() });
    await receiver.ingest(s, { ...tls, caller: 'agent:alice' });
    await receiver.ingest(s, { ...tls, caller: 'agent:alice' });
    await receiver.ingest(delta(s, [eventOp('ev-2')]), { ...tls, caller: 'agent:alice' });
    expect(seen).toEqual([
      { transactionId: 'tx-1', owner: 'agent:alice', version: 1 },
      { transactionId: 'tx-1', owner: 'agent:alice', version: 2 },
    ]);
  });

  it.each(Object.entries(stores))('wakes a follower at once on a commit (%s)', async (_, make) => {
    const store = await make();
    const [reader, writer] = [receiverOn(store), receiverOn(store)];
    await writer.ingest(snapshot({ state: anonymousState() }), tls);
    const write = () => writer.ingest(delta(snapshot(), [eventOp('ev-2')]), tls);
    expect(await followedWhile(reader, write)).toBe('ev-2');
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('commit signals across hosts on one PostgreSQL', () => {
  it('tells host A of a commit on host B, owner included', async () => {
    const url = await freshPgDatabase();
    const [a, b] = [await storeOn(await opened(url)), await storeOn(await opened(url))];
    const heard = nextCommit(a);
    await receiverOn(b).ingest(snapshot({ state: anonymousState() }), { ...tls, caller: 'agent:bob' });
    expect(await heard).toEqual({ transactionId: 'tx-1', owner: 'agent:bob', version: 1 });
  });

  it('wakes a follower on host A at once when host B commits', async () => {
    const url = await freshPgDatabase();
    const [a, b] = [await storeOn(await opened(url)), await storeOn(await opened(url))];
    const writer = receiverOn(b);
    await writer.ingest(snapshot({ state: anonymousState() }), tls);
    const write = () => writer.ingest(delta(snapshot(), [eventOp('ev-2')]), tls);
    expect(await followedWhile(receiverOn(a), write)).toBe('ev-2');
  });
});
