import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAcpReceiver, type AcpReceiver } from '../../acpspec/receiver.js';
import { isAcpError } from '../../acpspec/errors.js';
import {
  anonymousState,
  delta,
  envelopeIdFor,
  eventOp,
  RECEIVER_AGENT_ID,
  snapshot,
} from '../../../test/helpers/acp-builders.js';
import { givenChain, listFixtures } from '../../../test/helpers/acp-fixtures.js';
import { openDatabase, type Database } from '../sql/database.js';
import { migrateSets } from '../sql/migrations.js';
import { acpMigrations, KyselyTransactionStore } from './acp-transaction-store-kysely.js';

function receiverOn(database: Database): AcpReceiver {
  return createAcpReceiver({
    store: new KyselyTransactionStore(database),
    accepts: ['snapshot', 'delta'],
    receiverAgentId: RECEIVER_AGENT_ID,
    producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
  });
}

describe('ACPspec receiver on SQLite (two receivers, one database)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-recv-'));
  const url = `sqlite:${join(dir, 'acp.sqlite')}`;
  let hostA: Database;
  let hostB: Database;

  beforeAll(async () => {
    hostA = openDatabase({ url, dataDir: dir });
    // Kysely serialises one SQLite handle; two handles in one process would block each other's event loop.
    hostB = hostA;
    await migrateSets(hostA, [acpMigrations]);
  });
  afterAll(async () => {
    await hostA.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ingests every valid fixture chain and answers identical state bytes on both hosts', async () => {
    const a = receiverOn(hostA);
    const b = receiverOn(hostB);
    for (const fixture of listFixtures('valid')) {
      for (const step of [...givenChain(fixture), fixture]) {
        const ack = await a
          .ingest(step.envelope, { secure: true })
          .catch((e: unknown) =>
            isAcpError(e, 'ACP_ENVELOPE_CONFLICT')
              ? undefined
              : Promise.reject(e instanceof Error ? e : new Error('unexpected rejection')),
          );
        if (!ack) continue;
        expect(
          (await b.state(ack.transaction_id)).bytes.equals((await a.state(ack.transaction_id)).bytes),
        ).toBe(true);
      }
    }
  });

  it('lets one of two hosts win a race on the same parent', async () => {
    const base = snapshot({
      transaction_id: 'tx-race',
      envelope_id: envelopeIdFor(0x700),
      state: anonymousState(),
    });
    await receiverOn(hostA).ingest(base, { secure: true });
    const outcomes = await Promise.all(
      [hostA, hostB].map((host, i) =>
        receiverOn(host)
          .ingest(delta(base, [eventOp(`ev-race-${i}`)], { envelope_id: envelopeIdFor(0x701 + i) }), {
            secure: true,
          })
          .then(
            () => 'accepted',
            (e: unknown) => (isAcpError(e) ? e.code : 'other'),
          ),
      ),
    );
    expect(outcomes.sort()).toEqual(['ACP_ENVELOPE_CONFLICT', 'accepted']);
    expect((await receiverOn(hostB).events('tx-race')).events).toHaveLength(2);
  });
});
