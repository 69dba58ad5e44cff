import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import { LocalError } from '../shared/errors.js';

/**
 * Compiles each query shape once per store. The first run builds the query with Kysely — so the SQL is
 * the dialect's own — and keeps its text; later runs bind new parameters to that text, skipping the
 * builder and compiler (a third of the store's CPU on small queries). The first run also checks that the
 * builder's parameters are exactly the given ones, in order: a shape whose SQL would depend on its
 * values cannot slip in. Shapes that differ in SQL (e.g. a multi-row insert) need distinct names.
 */
export class QueryShapes {
  private readonly texts = new Map<string, string>();

  /**
   * Runs the shape `name` on `db` (the store's Kysely instance or a transaction of it).
   * @throws LocalError `INVALID_STATE` when the builder's parameters differ from `parameters`.
   */
  async run<R>(
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    db: Kysely<any>,
    name: string,
    parameters: readonly unknown[],
    build: () => Compilable<R>,
  ): Promise<QueryResult<R>> {
    return db.executeQuery<R>(CompiledQuery.raw(this.text(name, parameters, build), [...parameters]));
  }

  /**
   * The SQL text of the shape `name` (built and checked on first use, as {@link run} does), for a caller
   * that runs it on a raw driver handle.
   * @throws LocalError `INVALID_STATE` when the builder's parameters differ from `parameters`.
   */
  text(name: string, parameters: readonly unknown[], build: () => Compilable<unknown>): string {
    let text = this.texts.get(name);
    if (text === undefined) {
      const compiled = build().compile();
      const same =
        compiled.parameters.length === parameters.length &&
        compiled.parameters.every((p, i) => p === parameters[i]);
      if (!same)
        throw new LocalError(
          'INVALID_STATE',
          `query shape "${name}" binds other parameters than its builder`,
        );
      text = compiled.sql;
      this.texts.set(name, text);
    }
    return text;
  }
}
