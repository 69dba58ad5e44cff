import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { QueryShapes } from './query-shapes.js';

describe('QueryShapes', () => {
  const database = openDatabase({ url: 'sqlite::memory:', dataDir: '.' });
  afterAll(() => database.close());

  it('compiles a shape once and binds new parameters on later runs', async () => {
    const shapes = new QueryShapes();
    await database.db.schema.createTable('t').addColumn('k', 'text').addColumn('v', 'integer').execute();
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
    ] as const) {
      await shapes.run(database.db, 'insert', [k, v], () => database.db.insertInto('t').values({ k, v }));
    }
    const { rows } = await shapes.run<{ v: number }>(database.db, 'select', ['b'], () =>
      database.db.selectFrom('t').select('v').where('k', '=', 'b'),
    );
    expect(rows).toEqual([{ v: 2 }]);
  });

  it('refuses a shape whose builder binds other parameters', async () => {
    const shapes = new QueryShapes();
    await expect(
      shapes.run(database.db, 'bad', ['x'], () =>
        database.db.selectFrom('t').select('v').where('k', '=', 'y'),
      ),
    ).rejects.toThrow(/binds other parameters/);
  });
});
