import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAcmpTaskStore } from '../../acmp/provider/memory-task-store.js';
import { MemoryAgreementStore } from '../../storage/memory/acmp-agreement-store-memory.js';
import { MemorySessionStore } from '../../storage/memory/acmp-session-store-memory.js';
import { systemClock } from '../../shared/clock.js';
import { systemIds } from '../../shared/ids.js';
import { silentLogger } from '../../shared/logger.js';
import { KyselyAgreementStore } from '../../storage/acmp/acmp-agreement-store-kysely.js';
import { KyselySessionStore } from '../../storage/acmp/acmp-session-store-kysely.js';
import { KyselyAcmpTaskStore } from '../../storage/acmp/acmp-task-store-kysely.js';
import { openDatabase, type Database } from '../../storage/sql/database.js';
import { KyselyReservationStore } from '../../storage/escrow/escrow-reservations.js';
import { MemoryReservationStore } from '../../storage/memory/escrow-reservations-memory.js';
import { cleanup, onCleanup, tempDir } from '../../../test/helpers/cleanup.js';
import type { ModuleContext } from '../module.js';
import { AcmpNegotiation, negotiationStoresOf } from './acmp-negotiation.js';
import { acmpTaskStoreOf, reservationStoreOf } from './acmp.js';

afterEach(cleanup);

/** A SQLite database in a fresh directory (stores are only constructed: nothing is migrated or queried). */
function sqlite(): Database {
  const dir = tempDir('a2ac-acmp-module-');
  const database = openDatabase({ url: `sqlite:${join(dir, 'stores.sqlite')}`, dataDir: dir });
  onCleanup(() => database.close());
  return database;
}

function contextOf(database: Database | undefined): ModuleContext {
  return {
    database,
    logger: silentLogger,
    ids: systemIds,
    clock: systemClock,
    secure: false,
    baseUrl: () => '',
    stopping: new AbortController().signal,
  };
}

describe('the ACMP module’s stores per dialect', () => {
  it('keeps tasks and reservations in memory when the host has no database', () => {
    const context = contextOf(undefined);
    expect(acmpTaskStoreOf(context)).toBeInstanceOf(MemoryAcmpTaskStore);
    expect(reservationStoreOf(context)).toBeInstanceOf(MemoryReservationStore);
  });

  it('keeps tasks and reservations in the host database when there is one', () => {
    const context = contextOf(sqlite());
    expect(acmpTaskStoreOf(context)).toBeInstanceOf(KyselyAcmpTaskStore);
    expect(reservationStoreOf(context)).toBeInstanceOf(KyselyReservationStore);
  });

  it('keeps agreements, and sessions in session mode only, in memory without a database', () => {
    const context = contextOf(undefined);
    const flat = negotiationStoresOf(context, false);
    expect(flat.agreements).toBeInstanceOf(MemoryAgreementStore);
    expect(flat.sessions).toBeUndefined();
    expect(negotiationStoresOf(context, true).sessions).toBeInstanceOf(MemorySessionStore);
  });

  it('keeps agreements and sessions in the host database when there is one', () => {
    const stores = negotiationStoresOf(contextOf(sqlite()), true);
    expect(stores.agreements).toBeInstanceOf(KyselyAgreementStore);
    expect(stores.sessions).toBeInstanceOf(KyselySessionStore);
  });
});

describe('the ACMP module’s negotiation step', () => {
  it('resolves referenced tasks through sessions only in session mode', () => {
    const context = contextOf(undefined);
    expect(new AcmpNegotiation(context, {}).options.references).toBeUndefined();
    expect(new AcmpNegotiation(context, { sessions: false }).options.references).toBeUndefined();
    expect(new AcmpNegotiation(context, { sessions: true }).options.references).toBeTypeOf('function');
  });

  it('starts no session service when session mode is off', async () => {
    expect(await new AcmpNegotiation(contextOf(undefined), {}).startSessions([])).toBeUndefined();
  });

  it('starts the session service and its binding in session mode', async () => {
    const started = await new AcmpNegotiation(contextOf(undefined), { sessions: true }).startSessions([]);
    onCleanup(() => started?.service.close());
    expect(started?.binding.extension.uri).toBe('urn:a2a-commerce:acmp:negotiation-session:v0');
  });
});
