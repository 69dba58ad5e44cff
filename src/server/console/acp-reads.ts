import { ACP_CONSENT_SCOPES, ACP_EVENT_TYPES } from '../../acpspec/constants.js';
import type { AcpEvent, SnapshotEnvelope } from '../../acpspec/envelope.js';
import { composeSnapshot } from '../../acpspec/state-body.js';
import type { TransactionStore } from '../../acpspec/transaction-store.js';
import type { Database } from '../../storage/sql/database.js';
import { num, str } from './tables.js';

/** One transaction as the ACPspec page lists it. */
export interface ConsoleTransaction {
  readonly transactionId: string;
  readonly owner: string;
  readonly version: number;
  readonly eventCount: number;
  readonly updatedAt: string;
}

/** One party's consent: the state per scope, and the conflicts the stream recorded for it. */
export interface PartyConsent {
  readonly party: string;
  readonly scopes: Record<string, string | null>;
  readonly conflicts: { scope: string; held: unknown; asserted: unknown; envelopeId: unknown }[];
}

/** One transaction's page: its lifecycle (envelopes), events, consent per party and current snapshot. */
export interface TransactionDetail {
  readonly transaction: ConsoleTransaction;
  readonly timeline: { envelopeId: string; kind: string; receivedAt: string }[];
  readonly events: AcpEvent[];
  readonly consent: PartyConsent[];
  readonly snapshot: SnapshotEnvelope;
}

function decodeTransaction(row: Record<string, unknown>): ConsoleTransaction {
  return {
    transactionId: str(row.transaction_id),
    owner: str(row.owner),
    version: num(row.version),
    eventCount: num(row.event_count),
    updatedAt: str(row.updated_at),
  };
}

/** The newest transactions of every caller, and how many there are. */
export async function listTransactions(
  database: Database,
  limit: number,
): Promise<{ transactions: ConsoleTransaction[]; total: number }> {
  const rows = (await database.db
    .selectFrom('acp_transactions')
    .select(['transaction_id', 'owner', 'version', 'event_count', 'updated_at'])
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute()) as Record<string, unknown>[];
  const counted = (await database.db
    .selectFrom('acp_transactions')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst()) as { n: unknown } | undefined;
  return { transactions: rows.map(decodeTransaction), total: num(counted?.n) };
}

/** Consent per party (every scope) with the `consent.conflict` events of its records. */
function consentOf(snapshot: SnapshotEnvelope): PartyConsent[] {
  const parties = new Set([...Object.keys(snapshot.consent ?? {}), ...Object.keys(snapshot.parties ?? {})]);
  return [...parties].map((party) => {
    const held = snapshot.consent?.[party];
    const scopes = Object.fromEntries(ACP_CONSENT_SCOPES.map((s) => [s, held?.[s]?.state ?? null]));
    const conflicts = snapshot.events
      .filter((e) => e.type === ACP_EVENT_TYPES.consentConflict)
      .map((e) => (e.data ?? {}) as Record<string, unknown>)
      .filter((d) => d.party_id === party)
      .map((d) => ({
        scope: String(d.scope),
        held: d.held,
        asserted: d.asserted,
        envelopeId: d.envelope_id,
      }));
    return { party, scopes, conflicts };
  });
}

/** One transaction: head, ingested envelopes in order, and the state composed from the store. */
export async function readTransaction(
  database: Database,
  store: TransactionStore,
  transactionId: string,
): Promise<TransactionDetail | undefined> {
  const row = (await database.db
    .selectFrom('acp_transactions')
    .select(['transaction_id', 'owner', 'version', 'event_count', 'updated_at'])
    .where('transaction_id', '=', transactionId)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  const state = await store.state(transactionId);
  if (!row || !state) return undefined;
  const envelopes = (await database.db
    .selectFrom('acp_envelopes')
    .select(['envelope_id', 'kind', 'received_at'])
    .where('transaction_id', '=', transactionId)
    .orderBy('received_at')
    .limit(1000)
    .execute()) as Record<string, unknown>[];
  const snapshot = composeSnapshot(
    {
      envelopeId: state.head.stateEnvelopeId,
      transactionId,
      producedAt: state.head.stateProducedAt,
    },
    state.body,
    state.events,
  );
  return {
    transaction: decodeTransaction(row),
    timeline: envelopes.map((e) => ({
      envelopeId: String(e.envelope_id),
      kind: String(e.kind),
      receivedAt: String(e.received_at),
    })),
    events: snapshot.events,
    consent: consentOf(snapshot),
    snapshot,
  };
}
