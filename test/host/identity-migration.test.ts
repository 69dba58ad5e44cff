import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Task } from '@a2a-js/sdk';
import { ServerCallContext, type User } from '@a2a-js/sdk/server';
import { DatabasePushNotificationStore, DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { buildSnapshot, newEnvelopeId, stateOf, type SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { SDK_STORE_MIGRATIONS } from '../../src/server/host-migrations.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { acpMigrations } from '../../src/storage/acpspec/acp-transaction-store-kysely.js';
import { openDatabase, type Database } from '../../src/storage/sql/database.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { migrateSets } from '../../src/storage/sql/migrations.js';
import { codeOf, freshSnapshot, RECEIVER, txId } from '../acpspec/helpers.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

const ALICE = 'alice-secret-0123456789abcdef';
const ALICE_ID = `token:${createHash('sha256').update(ALICE).digest('hex').slice(0, 32)}`;

function userNamed(userName: string): User {
  return { isAuthenticated: userName !== '', userName };
}

/** A database: SQLite under `dataDir`, or the PostgreSQL database at `db`. */
interface Where {
  dataDir: string;
  db?: string;
}

/**
 * A database as the previous release left it: the SDK's tables and the ACPspec tables up to the owner
 * column, with rows of `token-0`, `token-1` and of the anonymous caller in each.
 */
async function plantPreviousRelease(
  where: Where,
): Promise<{ tokenZero: { tx: string; task: string }; anonymous: { tx: string; task: string } }> {
  const database = openDatabase({ url: where.db, dataDir: where.dataDir });
  try {
    await migrateSets(database, SDK_STORE_MIGRATIONS);
    const {
      '0001_initial': initial,
      '0002_transaction_owner': owner,
      '0003_envelope_ids': ids,
    } = acpMigrations.migrations;
    await migrateSets(database, [
      {
        id: 'acp',
        migrations: { '0001_initial': initial!, '0002_transaction_owner': owner!, '0003_envelope_ids': ids! },
      },
    ]);
    const tasks = new DatabaseTaskStore(database.db);
    const push = new DatabasePushNotificationStore(database.db);
    const plant = async (previousName: string, caller: string) => {
      const context = new ServerCallContext({ user: userNamed(previousName) });
      const task = crypto.randomUUID();
      await tasks.save(
        Task.fromJSON({
          id: task,
          contextId: crypto.randomUUID(),
          status: { state: 'TASK_STATE_COMPLETED' },
        }),
        context,
      );
      await push.save(task, context, {
        tenant: '',
        id: 'cfg-1',
        taskId: task,
        url: 'http://127.0.0.1:9/hook',
        token: '',
        authentication: undefined,
      });
      const tx = txId('old');
      await plantLegacyTransaction(database, freshSnapshot(tx), caller);
      return { tx, task };
    };
    const tokenZero = await plant('token-0', 'token-0');
    await plant('token-1', 'token-1');
    // The previous release's anonymous caller: '' for ACPspec, the SDK resolver's 'unknown' for tasks.
    const anonymous = await plant('', '');
    return { tokenZero, anonymous };
  } finally {
    await database.close();
  }
}

/**
 * One transaction as releases before migration 0005_state_parts stored it (issue 10): the whole state
 * snapshot's canonical text in acp_transactions.state_body, events as plain JSON.
 */
async function plantLegacyTransaction(
  database: Database,
  envelope: SnapshotEnvelope,
  owner: string,
): Promise<void> {
  const stateId = newEnvelopeId();
  const producedAt = '2025-06-01T12:00:01Z';
  const state = buildSnapshot({
    transaction_id: envelope.transaction_id,
    producer: { ...RECEIVER },
    state: stateOf(envelope),
    envelope_id: stateId,
    produced_at: producedAt,
  });
  const tx = envelope.transaction_id;
  await database.db
    .insertInto('acp_transactions')
    .values({
      transaction_id: tx,
      version: 1,
      head_envelope_id: envelope.envelope_id,
      state_envelope_id: stateId,
      state_body: canonicalJson(state),
      event_count: state.events.length,
      updated_at: producedAt,
      owner,
    })
    .execute();
  await database.db
    .insertInto('acp_envelopes')
    .values({
      envelope_id: envelope.envelope_id,
      transaction_id: tx,
      kind: 'snapshot',
      parent_envelope_id: null,
      state_envelope_id: stateId,
      received_at: producedAt,
      body: canonicalJson(envelope),
    })
    .execute();
  await database.db
    .insertInto('acp_envelope_ids')
    .values([
      { envelope_id: envelope.envelope_id, transaction_id: tx, role: 'ingested' },
      { envelope_id: stateId, transaction_id: tx, role: 'state' },
    ])
    .execute();
  await database.db
    .insertInto('acp_events')
    .values(
      state.events.map((event, i) => ({
        transaction_id: tx,
        seq: i + 1,
        event_id: event.event_id,
        body: JSON.stringify(event),
      })),
    )
    .execute();
}

async function ownersIn(where: Where): Promise<Record<string, string[]>> {
  const database = openDatabase({ url: where.db, dataDir: where.dataDir });
  try {
    const distinct = async (table: string) =>
      (
        (await database.db.selectFrom(table).select('owner').distinct().orderBy('owner').execute()) as {
          owner: string;
        }[]
      ).map((r) => r.owner);
    return {
      tasks: await distinct('tasks'),
      push: await distinct('push_notification_configs'),
      acp: await distinct('acp_transactions'),
    };
  } finally {
    await database.close();
  }
}

async function startHost(where: Where, token?: string) {
  const host = await startTestHost({
    flags: {
      'tls-self-signed': true,
      ...(where.db ? { db: where.db } : {}),
      ...(token ? { token: [token] } : {}),
    },
    dataDir: where.dataDir,
    migrate: where.db !== undefined,
    modules: [acpModule({ producer: { ...RECEIVER } })],
  });
  const caCert = host.tls!.cert;
  const acp = await createAcpClient({ agentUrl: host.url, caCert, ...(token ? { token } : {}) });
  const a2a = await createA2AClient(await fetchAgentCard(host.url, { caCert }), {
    caCert,
    ...(token ? { token } : {}),
  });
  return {
    close: () => host.close(),
    sees: async (data: { tx: string; task: string }) => ({
      state: await codeOf(acp.requestState(data.tx).then((s) => s.transaction_id)),
      task: await codeOf(a2a.getTask({ tenant: '', id: data.task, historyLength: 0 }).then((t) => t.id)),
    }),
  };
}

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env: {}, stdout, stderr };
}

/** The databases the migration runs on here: SQLite, and PostgreSQL when TEST_PG_URL is set. */
const DATABASES: [string, () => Promise<Where>][] = [
  ['SQLite', () => Promise.resolve({ dataDir: tempDir() })],
  ...(process.env.TEST_PG_URL
    ? [
        ['PostgreSQL', async () => ({ dataDir: tempDir(), db: await freshPgDatabase() })] as [
          string,
          () => Promise<Where>,
        ],
      ]
    : []),
];

describe.each(DATABASES)('migrating position-based owners (token-N) on %s', (_name, database) => {
  it('moves token-N rows to an unreachable legacy identity, so the first token of the new list inherits nothing', async () => {
    const where = await database();
    const planted = await plantPreviousRelease(where);
    const host = await startHost(where, ALICE);
    const seen = await host.sees(planted.tokenZero);
    expect(seen.state).toBe('ACP_TRANSACTION_UNKNOWN');
    expect(seen.task).not.toBe(planted.tokenZero.task);
    await host.close();
    expect(await ownersIn(where)).toEqual({
      tasks: ['anonymous', 'legacy:token-0', 'legacy:token-1'],
      push: ['anonymous', 'legacy:token-0', 'legacy:token-1'],
      acp: ['anonymous', 'legacy:token-0', 'legacy:token-1'],
    });
  });
});

describe('migrating position-based owners (token-N)', () => {
  it('keeps the anonymous rows with the anonymous caller of a host without tokens', async () => {
    const where = { dataDir: tempDir() };
    const planted = await plantPreviousRelease(where);
    const host = await startHost(where);
    expect(await host.sees(planted.anonymous)).toEqual({
      state: planted.anonymous.tx,
      task: planted.anonymous.task,
    });
  });

  it('`reassign` gives legacy rows to the agent the operator names', async () => {
    const where = { dataDir: tempDir() };
    const planted = await plantPreviousRelease(where);
    await (await startHost(where, ALICE)).close();
    const io = capture();
    const db = `sqlite:${join(where.dataDir, 'a2a-commerce.sqlite')}`;
    expect(await runCli(['reassign', '--from', 'legacy:token-0', '--to', ALICE_ID, '--db', db], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/acp_transactions: 1/);
    const host = await startHost(where, ALICE);
    expect(await host.sees(planted.tokenZero)).toEqual({
      state: planted.tokenZero.tx,
      task: planted.tokenZero.task,
    });
    expect((await ownersIn(where)).acp).toEqual(['anonymous', 'legacy:token-1', ALICE_ID]);
  });

  it('`reassign` refuses a target that is not an identity this host can give out', async () => {
    const io = capture();
    const db = `sqlite:${join(tempDir(), 'x.sqlite')}`;
    expect(await runCli(['reassign', '--from', 'legacy:token-0', '--to', 'token-0', '--db', db], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/identity/);
  });
});
