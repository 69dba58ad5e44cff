import { randomBytes } from 'node:crypto';
import type { SqlMigration } from '../sql/migrations.js';
import { z } from 'zod';
import type { AcceptOutcome, Agreement, AgreementStore } from '../../acmp/negotiation/agreement-store.js';
import { OfferTermsSchema } from '../../acmp/negotiation/offer-codec.js';
import { LocalError } from '../../shared/errors.js';
import type { Database } from '../sql/database.js';
import {
  bindSql,
  column,
  IntColumn as Int,
  sqlQuery,
  SqlRunner,
  text,
  type BoundSql,
  type SqlKysely,
} from '../sql/query.js';

/** Layer 6 agreements and the provider's settings (its offer key) — part of the `acmp` migration set. */
export const agreementsMigration: SqlMigration = {
  async up(db: SqlKysely): Promise<void> {
    await db.schema
      .createTable('acmp_agreements')
      .addColumn('offer_key', 'text', (c) => c.primaryKey())
      .addColumn('offer_id', 'text', (c) => c.notNull())
      .addColumn('tenant', 'text', (c) => c.notNull())
      .addColumn('agent', 'text', (c) => c.notNull())
      .addColumn('terms', 'text', (c) => c.notNull())
      .addColumn('escrow_id', 'text', (c) => c.unique())
      .addColumn('accepted_at', 'bigint', (c) => c.notNull())
      .addColumn('invoke_by', 'bigint', (c) => c.notNull())
      .addColumn('consumed_by', 'text')
      .execute();
    await db.schema
      .createTable('acmp_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};

const AgreementRow = z.object({
  offer_key: z.string(),
  offer_id: z.string(),
  tenant: z.string(),
  agent: z.string(),
  terms: z.string(),
  escrow_id: z.string().nullable(),
  accepted_at: Int,
  invoke_by: Int,
  consumed_by: z.string().nullable(),
});

const COLUMNS = 'offer_key, offer_id, tenant, agent, terms, escrow_id, accepted_at, invoke_by, consumed_by';

const BY_OFFER_KEY = sqlQuery(`SELECT ${COLUMNS} FROM acmp_agreements WHERE offer_key = $1`, decode);
const BY_ESCROW = sqlQuery(`SELECT ${COLUMNS} FROM acmp_agreements WHERE escrow_id = $1`, decode);
const CONSUME = sqlQuery(
  `UPDATE acmp_agreements SET consumed_by = $1 WHERE offer_key = $2 AND (consumed_by IS NULL OR consumed_by = $3) RETURNING offer_key`,
  column('offer_key', text),
);
const OFFER_KEY = sqlQuery(`SELECT value FROM acmp_settings WHERE name = $1`, decodeOfferKey);

/**
 * {@link AgreementStore} on SQLite or PostgreSQL: accept is one `INSERT … ON CONFLICT DO NOTHING` (the
 * offer key and the escrow id are both unique), consume one conditional UPDATE, so an offer is accepted
 * once and an agreement executed once however many hosts share the tables. The offer key is one row
 * every host reads, created by whichever host needs it first.
 */
export class KyselyAgreementStore implements AgreementStore {
  private readonly sql: BoundSql;
  private key: Promise<Buffer> | undefined;

  constructor(database: Pick<Database, 'db' | 'dialect'>) {
    this.sql = bindSql(new SqlRunner(database.dialect), database.db);
  }

  offerKey(): Promise<Buffer> {
    this.key ??= this.loadKey().catch((error: unknown) => {
      this.key = undefined;
      throw error;
    });
    return this.key;
  }

  async accept(agreement: Agreement): Promise<AcceptOutcome> {
    const inserted = await this.sql.exec(
      `INSERT INTO acmp_agreements (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL) ON CONFLICT DO NOTHING`,
      [
        agreement.offerKey,
        agreement.offerId,
        agreement.scope.tenant,
        agreement.scope.agent,
        JSON.stringify(agreement.terms),
        agreement.escrowId,
        agreement.acceptedAt,
        agreement.invokeBy,
      ],
    );
    if (inserted === 1) return { kind: 'accepted' };
    const existing = await this.get(agreement.offerKey);
    return existing ? { kind: 'exists', existing } : { kind: 'escrow_committed' };
  }

  async get(offerKey: string): Promise<Agreement | undefined> {
    return this.sql.first(BY_OFFER_KEY, [offerKey]);
  }

  async byEscrow(escrowId: string): Promise<Agreement | undefined> {
    return this.sql.first(BY_ESCROW, [escrowId]);
  }

  async consume(offerKey: string, taskId: string): Promise<boolean> {
    return (await this.sql.rows(CONSUME, [taskId, offerKey, taskId])).length === 1;
  }

  async unconsume(offerKey: string, taskId: string): Promise<void> {
    await this.sql.exec(
      `UPDATE acmp_agreements SET consumed_by = NULL WHERE offer_key = $1 AND consumed_by = $2`,
      [offerKey, taskId],
    );
  }

  private async loadKey(): Promise<Buffer> {
    await this.sql.exec(`INSERT INTO acmp_settings (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      'offer_key',
      randomBytes(32).toString('base64url'),
    ]);
    // No row at all reads as a row without a usable key.
    return (await this.sql.first(OFFER_KEY, ['offer_key'])) ?? decodeOfferKey(undefined);
  }
}

/** The offer key's settings row: at least 32 bytes in base64url. */
function decodeOfferKey(row: unknown): Buffer {
  const parsed = z.object({ value: z.string().min(43) }).safeParse(row);
  if (!parsed.success) throw new LocalError('INVALID_STATE', 'acmp_settings has no usable offer key');
  return Buffer.from(parsed.data.value, 'base64url');
}

function decode(row: unknown): Agreement {
  const parsed = AgreementRow.safeParse(row);
  const terms = parsed.success ? OfferTermsSchema.safeParse(JSON.parse(parsed.data.terms)) : undefined;
  if (!parsed.success || !terms?.success)
    throw new LocalError('INVALID_STATE', 'acmp_agreements row is malformed');
  const r = parsed.data;
  return {
    offerKey: r.offer_key,
    offerId: r.offer_id,
    scope: { tenant: r.tenant, agent: r.agent },
    terms: terms.data,
    escrowId: r.escrow_id,
    acceptedAt: r.accepted_at,
    invokeBy: r.invoke_by,
    consumedBy: r.consumed_by,
  };
}
