import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './database.js';
import { z } from 'zod';
import { column, count, noRows, rowOf, runOn, sqlQuery, SqlRunner, text } from './query.js';
import { dialectStatement } from './sql-text.js';

const targets: [string, string | undefined][] = [
  ['SQLite', 'sqlite::memory:'],
  ['PostgreSQL', process.env.TEST_PG_URL],
];

describe.each(targets)('SqlRunner on %s', (_name, url) => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  const open = (): { database: Database; sql: SqlRunner } => {
    database = openDatabase({ url, dataDir: '.' });
    return { database, sql: new SqlRunner(database.dialect) };
  };

  it.skipIf(url === undefined)(
    'decodes every row with the decoder declared beside the statement',
    async () => {
      const { database, sql } = open();
      const pair = sqlQuery(
        `SELECT $1::text AS name, $2::integer AS n UNION ALL SELECT $3::text AS name, $4::integer AS n`,
        (row) => ({
          name: column('name', text)(row),
          n: column('n', count)(row),
        }),
      );
      const rows = await sql.rows(database.db, pair, ['a', 1, 'b', 2]);
      expect(rows).toEqual([
        { name: 'a', n: 1 },
        { name: 'b', n: 2 },
      ]);
    },
  );

  it.skipIf(url === undefined)('reads no row as undefined and a COUNT over nothing as 0', async () => {
    const { database, sql } = open();
    const none = sqlQuery(`SELECT $1::text AS name WHERE 1 = 0`, column('name', text));
    expect(await sql.first(database.db, none, ['x'])).toBeUndefined();
    const zero = sqlQuery(`SELECT COUNT(*) AS total WHERE 1 = 0`, column('total', count));
    expect(await sql.first(database.db, zero, [])).toBe(0);
  });

  it.skipIf(url === undefined)('runOn decodes each row with its statement’s decoder', async () => {
    const { database } = open();
    const named = rowOf(z.object({ name: z.string() }), 'named');
    const run = runOn(database.db);
    const good = dialectStatement(database.dialect, `SELECT $1::text AS name`, named);
    expect(await run(good, ['a'])).toEqual([{ name: 'a' }]);
    const wrong = dialectStatement(database.dialect, `SELECT 7 AS name`, named);
    await expect(run(wrong, [])).rejects.toThrow('a named row is malformed');
    const write = dialectStatement(database.dialect, `SELECT 1 AS n`, noRows);
    await expect(run(write, [])).rejects.toMatchObject({ code: 'INVALID_STATE' });
  });

  it.skipIf(url === undefined)('throws when a row is not what its decoder reads', async () => {
    const { database, sql } = open();
    const wrong = sqlQuery(`SELECT 7 AS name`, column('name', text));
    await expect(sql.rows(database.db, wrong, [])).rejects.toMatchObject({ code: 'INVALID_STATE' });
  });
});
