import type { SqlMigration } from './migrations.js';
import { ANONYMOUS_IDENTITY, legacyIdentityOf } from '../../shared/identity.js';
import type { SqlKysely } from './query.js';

/** A column holding the identity of the caller that owns a row (src/shared/identity.ts). */
export interface OwnerColumn {
  readonly table: string;
  readonly column: string;
}

/**
 * A migration to caller identities from the releases that named callers by position: `token-<n>` owners
 * become `legacy:token-<n>`, which no credential resolves to (the old token list is unknown, so mapping
 * them to a token would guess; an operator reassigns them with `a2a-commerce reassign`), and the owners
 * those releases gave anonymous callers (`previousAnonymous`) become `anonymous`.
 */
export function ownerIdentityMigration(
  columns: readonly OwnerColumn[],
  previousAnonymous: readonly string[],
): SqlMigration {
  return {
    async up(db: SqlKysely): Promise<void> {
      for (const { table, column } of columns) {
        const rows = await db.selectFrom(table).select(column).distinct().execute();
        for (const owner of rows.map((r) => r[column])) {
          if (typeof owner !== 'string') continue;
          const target =
            legacyIdentityOf(owner) ?? (previousAnonymous.includes(owner) ? ANONYMOUS_IDENTITY : undefined);
          if (target !== undefined)
            await db.updateTable(table).set(column, target).where(column, '=', owner).execute();
        }
      }
    },
    // No `down`: reversing would hand legacy rows back to whichever token now sits at that position.
  };
}

/** Rows moved from one owner to another, per table. */
export interface Reassigned {
  readonly table: string;
  readonly rows: number;
}

/**
 * Moves every row owned by `from` to `to`, in one transaction over the given columns (tables that do not
 * exist are skipped). Run it for rows no running task still writes, e.g. legacy rows.
 */
export async function reassignOwner(
  db: SqlKysely,
  columns: readonly OwnerColumn[],
  { from, to }: { readonly from: string; readonly to: string },
): Promise<Reassigned[]> {
  const existing = new Set((await db.introspection.getTables()).map((t) => t.name));
  return db.transaction().execute(async (trx) => {
    const moved: Reassigned[] = [];
    for (const { table, column } of columns) {
      if (!existing.has(table)) continue;
      const result = await trx.updateTable(table).set(column, to).where(column, '=', from).executeTakeFirst();
      moved.push({ table, rows: Number(result.numUpdatedRows) });
    }
    return moved;
  });
}
