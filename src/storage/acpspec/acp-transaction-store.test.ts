import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../sql/database.js';
import { migrateSets } from '../sql/migrations.js';
import {
  acpMigrations,
  createKyselyTransactionStore,
  KyselyTransactionStore,
} from './acp-transaction-store-kysely.js';
import {
  delta,
  envelopeIdFor,
  eventOp,
  leadState,
  RECEIVER_AGENT_ID,
  snapshot,
} from '../../../test/helpers/acp-builders.js';
import { createAcpReceiver } from '../../acpspec/receiver.js';
import { Migrator, sql } from 'kysely';
import { composeStateText } from '../../acpspec/state-body.js';
import { canonicalJson } from '../../shared/jcs.js';

describe('acp migrations 0002_transaction_owner and 0003_owner_identities', () => {
  it('give transactions stored before them the anonymous identity', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-owner-'));
    const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
    try {
      const first = acpMigrations.migrations['0001_initial']!;
      await migrateSets(database, [{ id: 'acp', migrations: { '0001_initial': first } }]);
      await database.db
        .insertInto('acp_transactions')
        .values({
          transaction_id: 'tx-old',
          version: 1,
          head_envelope_id: 'e1',
          state_envelope_id: 's1',
          state_body: '{}',
          event_count: 0,
          updated_at: 'now',
        })
        .execute();
      await migrateSets(database, [acpMigrations]);
      expect((await new KyselyTransactionStore(database).head('tx-old'))?.owner).toBe('anonymous');
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('KyselyTransactionStore reads (STYLE.md "Boundaries": a database row is decoded at the edge)', () => {
  it('refuses a head whose text column holds another type (SQLite keeps a blob in a TEXT column)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-rows-'));
    const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
    try {
      await migrateSets(database, [acpMigrations]);
      await sql`INSERT INTO acp_transactions (transaction_id, version, head_envelope_id, state_envelope_id,
        event_count, updated_at, owner) VALUES ('tx-blob', 1, 'e1', 's1', 0, 'now', X'6f776e6572')`.execute(
        database.db,
      );
      await expect(new KyselyTransactionStore(database).head('tx-blob')).rejects.toMatchObject({
        code: 'INVALID_STATE',
      });
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('acp migration 0003_envelope_ids', () => {
  it('registers the envelope and state ids stored before it, so they stay unique', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-ids-'));
    const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
    try {
      const { '0001_initial': first, '0002_transaction_owner': second } = acpMigrations.migrations;
      await migrateSets(database, [
        { id: 'acp', migrations: { '0001_initial': first!, '0002_transaction_owner': second! } },
      ]);
      await database.db
        .insertInto('acp_envelopes')
        .values({
          envelope_id: 'e1',
          transaction_id: 'tx-old',
          kind: 'snapshot',
          parent_envelope_id: null,
          state_envelope_id: 's1',
          received_at: 'now',
          body: '{}',
        })
        .execute();
      await migrateSets(database, [acpMigrations]);
      const store = new KyselyTransactionStore(database);
      expect(await store.findEnvelopeId('s1')).toEqual({ role: 'state', transactionId: 'tx-old' });
      expect((await store.findEnvelopeId('e1'))?.role).toBe('ingested');
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('acp migration 0005_state_parts (docs/acpspec-core.md "Ingest path")', () => {
  it('splits a whole stored state into its body and canonical event rows, and composes the same bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-parts-'));
    const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
    try {
      // Everything before 0005 (0006 and later build on it).
      const {
        '0005_state_parts': parts,
        '0006_owner_listing': _listing,
        ...before
      } = acpMigrations.migrations;
      await migrateSets(database, [{ id: 'acp', migrations: before }]);
      const state = leadState();
      const snapshotText = canonicalJson({
        ...snapshot({ transaction_id: 'tx-old', envelope_id: envelopeIdFor(7), state }),
        producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
      });
      await database.db
        .insertInto('acp_transactions')
        .values({
          transaction_id: 'tx-old',
          version: 1,
          head_envelope_id: envelopeIdFor(6),
          state_envelope_id: envelopeIdFor(7),
          state_body: snapshotText,
          event_count: 1,
          updated_at: '2025-06-01T12:00:00Z',
          owner: 'anonymous',
        })
        .execute();
      // Stored before: not canonical (keys in insertion order).
      await database.db
        .insertInto('acp_events')
        .values({
          transaction_id: 'tx-old',
          seq: 1,
          event_id: state.events[0]!.event_id,
          body: JSON.stringify(state.events[0]),
        })
        .execute();
      expect(parts).toBeDefined();
      await migrateSets(database, [acpMigrations]);
      const stored = (await new KyselyTransactionStore(database).state('tx-old'))!;
      const meta = {
        envelopeId: envelopeIdFor(7),
        transactionId: 'tx-old',
        producedAt: '2025-06-01T12:00:00Z',
      };
      const composed = JSON.parse(
        composeStateText({ meta, body: stored.body, eventTexts: stored.eventTexts }, new WeakMap()),
      ) as Record<string, unknown>;
      expect(canonicalJson(composed)).toBe(snapshotText);
      expect(stored.eventTexts).toEqual([canonicalJson(state.events[0])]);
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('acp migration 0005_state_parts, down', () => {
  it('composes each whole state again, byte for byte what the receiver answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-parts-down-'));
    const database = openDatabase({ url: `sqlite:${join(dir, 'acp.sqlite')}`, dataDir: dir });
    try {
      await migrateSets(database, [acpMigrations]);
      const receiver = createAcpReceiver({
        store: createKyselyTransactionStore(database),
        accepts: ['snapshot', 'delta'],
        receiverAgentId: RECEIVER_AGENT_ID,
        producer: { agent_id: RECEIVER_AGENT_ID, role: 'dealer_agent' },
      });
      const base = snapshot({
        transaction_id: 'tx-down',
        envelope_id: envelopeIdFor(0x500),
        state: leadState(),
      });
      await receiver.ingest(base, { secure: true });
      await receiver.ingest(delta(base, [eventOp('ev-down')], { envelope_id: envelopeIdFor(0x501) }), {
        secure: true,
      });
      const { bytes } = await receiver.state('tx-down');
      const migrator = new Migrator({
        db: database.db,
        provider: { getMigrations: () => Promise.resolve(acpMigrations.migrations) },
        migrationTableName: 'a2ac_acp_migrations',
        migrationLockTableName: 'a2ac_migrations_lock',
      });
      const { error } = await migrator.migrateTo('0004_owner_identities');
      expect(error).toBeUndefined();
      const row = (await database.db
        .selectFrom('acp_transactions')
        .select('state_body')
        .where('transaction_id', '=', 'tx-down')
        .executeTakeFirst()) as { state_body: string };
      expect(row.state_body).toBe(bytes.toString('utf8'));
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
