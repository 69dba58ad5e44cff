import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, eventOp } from '../helpers/acp-builders.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';
import { freshDelta, freshSnapshot, postEnvelope, startAcpHost, txId, type AcpTestHost } from './helpers.js';

afterEach(cleanup);

const TRIALS = 100;

/** Posts one envelope to every host at once; the bodies unless every host answered 200 with the same ack. */
async function postToAll(hosts: AcpTestHost[], body: string): Promise<unknown[] | undefined> {
  const answers = await Promise.all(hosts.map((host) => postEnvelope(host, body)));
  const first = answers[0]!.raw;
  return answers.every((answer) => answer.status === 200 && answer.raw.equals(first))
    ? undefined
    : answers.map((a) => a.body);
}

describe.skipIf(!process.env.TEST_PG_URL)('two hosts on one PostgreSQL (issue 9; design "Deltas")', () => {
  it(
    'answer the same envelope sent to both at once with the same ack, never a conflict',
    { timeout: 120_000 },
    async () => {
      const db = await freshPgDatabase();
      const start = (): Promise<AcpTestHost> =>
        startAcpHost({
          flags: { 'tls-self-signed': true, db },
          dataDir: tempDir('a2ac-acp-replay-'),
          migrate: true,
        });
      const hosts = [await start(), await start()];
      const unexpected: unknown[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const base = freshSnapshot(txId(`replay-${trial}`), anonymousState());
        for (const envelope of [base, freshDelta(base, [eventOp(`ev-${trial}`)])]) {
          const answers = await postToAll(hosts, canonicalJson(envelope));
          if (answers) unexpected.push(answers);
        }
      }
      expect(unexpected).toEqual([]);
    },
  );
});
