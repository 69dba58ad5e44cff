import { afterEach, describe, expect, it } from 'vitest';
import { createAcpReceiver, type AcpReceiver } from '../../acpspec/receiver.js';
import { isAcpError } from '../../acpspec/errors.js';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import {
  anonymousState,
  delta,
  eventOp,
  RECEIVER_AGENT_ID,
  snapshot,
} from '../../../test/helpers/acp-builders.js';
import { cleanup, onCleanup, tempDir } from '../../../test/helpers/host.js';
import { freshPgDatabase } from '../../../test/helpers/pg.js';
import { newEnvelopeId, type Envelope } from '../../acpspec/envelope.js';
import { openDatabase, type Database } from '../sql/database.js';
import { migrateSets } from '../sql/migrations.js';
import { MemoryTransactionStore } from '../memory/acp-transaction-store-memory.js';
import { acpMigrations, KyselyTransactionStore } from './acp-transaction-store-kysely.js';

afterEach(cleanup);

const TRIALS = 100;
const tls = { secure: true };

function receiverOn(store: TransactionStore): AcpReceiver {
  return createAcpReceiver({
    store,
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
  });
}

async function opened(url: string): Promise<Database> {
  const database = openDatabase({ url, dataDir: tempDir('acp-replay-') });
  onCleanup(() => database.close());
  await migrateSets(database, [acpMigrations]);
  return database;
}

/** Sends one envelope three times at once (twice to `a`, once to `b`); the answers unless all are the same ack. */
async function sendConcurrently(
  a: AcpReceiver,
  b: AcpReceiver,
  envelope: Envelope,
): Promise<unknown[] | undefined> {
  const answers = await Promise.all(
    [a.ingest(envelope, tls), b.ingest(envelope, tls), a.ingest(envelope, tls)].map((p) =>
      p.catch((e: unknown) => e),
    ),
  );
  const same =
    !answers.some((answer) => isAcpError(answer)) &&
    answers.every((answer) => JSON.stringify(answer) === JSON.stringify(answers[0]));
  return same
    ? undefined
    : answers.map((answer) => (isAcpError(answer) ? `${answer.code}: ${answer.message}` : answer));
}

/**
 * Sends a snapshot (a new transaction) and then a delta on it to both receivers concurrently, `TRIALS` times,
 * and lists the answers that were not the replay ack. Design "Deltas": the same envelope_id with the
 * same bytes is an idempotent no-op, wherever and however often it arrives.
 */
async function conflictsOver(a: AcpReceiver, b: AcpReceiver): Promise<unknown[]> {
  const unexpected: unknown[] = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    const base = snapshot({
      transaction_id: `tx-replay-${trial}`,
      envelope_id: newEnvelopeId(),
      state: anonymousState(),
    });
    const d = delta(base, [eventOp(`ev-${trial}`)], { envelope_id: newEnvelopeId() });
    for (const envelope of [base, d]) {
      const answers = await sendConcurrently(a, b, envelope);
      if (answers) unexpected.push(answers);
    }
  }
  return unexpected;
}

describe('the same envelope sent to two receivers at once gets the replay ack, never a conflict (docs/acpspec-core.md "Envelope ids are unique across the store")', () => {
  it('memory store shared by two receivers', { timeout: 30_000 }, async () => {
    const store = new MemoryTransactionStore();
    expect(await conflictsOver(receiverOn(store), receiverOn(store))).toEqual([]);
  });

  it('SQLite shared by two receivers', { timeout: 30_000 }, async () => {
    // Kysely serialises one SQLite handle; two handles in one process would block each other's event loop.
    const database = await opened(`sqlite:${tempDir('acp-replay-')}/acp.sqlite`);
    const store = new KyselyTransactionStore(database);
    expect(await conflictsOver(receiverOn(store), receiverOn(store))).toEqual([]);
  });
});

describe.skipIf(!process.env.TEST_PG_URL)(
  'the same envelope sent to two hosts on one PostgreSQL at once (docs/acpspec-core.md "Envelope ids are unique across the store")',
  () => {
    it('gets the replay ack on both hosts, never a conflict', { timeout: 60_000 }, async () => {
      const url = await freshPgDatabase();
      const [hostA, hostB] = [await opened(url), await opened(url)];
      const a = receiverOn(new KyselyTransactionStore(hostA));
      const b = receiverOn(new KyselyTransactionStore(hostB));
      expect(await conflictsOver(a, b)).toEqual([]);
    });
  },
);
