import { z } from 'zod';
import { ACP_OBJECT_KEYS } from '../../acpspec/constants.js';
import { composeStateText, decodeStateBody } from '../../acpspec/state-body.js';
import { canonicalJson } from '../../shared/jcs.js';
import { IntColumn, rowOf, type SqlKysely } from '../sql/query.js';

/*
 * The data steps of migration 0005_state_parts (src/storage/acp-tables.ts): the state snapshot that was
 * kept whole in acp_transactions.state_body becomes a body row in acp_states (the header fields the
 * receiver chose and the seven objects other than events; the events are already in acp_events), and
 * every stored event body becomes its canonical (RFC 8785) text, from which the state's bytes are now
 * composed. Rows are read in pages so a large store does not have to fit in memory.
 */

const PAGE = 500;
const BODY_KEYS = ['acp_version', 'producer', ...ACP_OBJECT_KEYS.filter((key) => key !== 'events')];

/*
 * The rows each step reads, decoded beside the select that reads them (the migration runs on tables whose
 * shape it changes, so every column reads as `unknown` until decoded).
 */
const LEGACY_STATE = rowOf(
  z.object({ transaction_id: z.string(), version: IntColumn, state_body: z.string() }),
  'acp_transactions',
);
const EVENT = rowOf(z.object({ transaction_id: z.string(), seq: IntColumn, body: z.string() }), 'acp_events');
const HEAD_AND_BODY = rowOf(
  z.object({
    transaction_id: z.string(),
    state_envelope_id: z.string(),
    updated_at: z.string(),
    event_count: IntColumn,
    body: z.string(),
  }),
  'acp_transactions',
);
const EVENT_BODY = rowOf(z.object({ body: z.string() }), 'acp_events');

/**
 * The body of a legacy whole-snapshot text. A text that is not a JSON object is kept as it is: that
 * transaction then reads as `INVALID_STATE`, as it would have before.
 */
function legacyBodyText(stateText: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stateText);
  } catch {
    return stateText;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return stateText;
  // JCS orders the members, so keeping the body's members in the text's order changes no byte.
  return canonicalJson(Object.fromEntries(Object.entries(parsed).filter(([key]) => BODY_KEYS.includes(key))));
}

/** Moves every transaction's state body into acp_states. */
export async function splitLegacyStates(db: SqlKysely): Promise<void> {
  let after = '';
  for (;;) {
    const rows = (
      await db
        .selectFrom('acp_transactions')
        .select(['transaction_id', 'version', 'state_body'])
        .where('transaction_id', '>', after)
        .orderBy('transaction_id')
        .limit(PAGE)
        .execute()
    ).map(LEGACY_STATE);
    const last = rows.at(-1);
    if (last === undefined) return;
    await db
      .insertInto('acp_states')
      .values(
        rows.map((row) => ({
          transaction_id: row.transaction_id,
          version: row.version,
          body: legacyBodyText(row.state_body),
        })),
      )
      .execute();
    after = last.transaction_id;
  }
}

/** Rewrites every event body that is not its canonical text. */
export async function canonicaliseEvents(db: SqlKysely): Promise<void> {
  let after = { transaction_id: '', seq: 0 };
  for (;;) {
    const rows = (
      await db
        .selectFrom('acp_events')
        .select(['transaction_id', 'seq', 'body'])
        .where((eb) =>
          eb.or([
            eb('transaction_id', '>', after.transaction_id),
            eb.and([eb('transaction_id', '=', after.transaction_id), eb('seq', '>', after.seq)]),
          ]),
        )
        .orderBy('transaction_id')
        .orderBy('seq')
        .limit(PAGE)
        .execute()
    ).map(EVENT);
    const last = rows.at(-1);
    if (last === undefined) return;
    for (const row of rows) {
      const text = canonicalText(row.body);
      if (text !== row.body) {
        await db
          .updateTable('acp_events')
          .set({ body: text })
          .where('transaction_id', '=', row.transaction_id)
          .where('seq', '=', row.seq)
          .execute();
      }
    }
    after = { transaction_id: last.transaction_id, seq: last.seq };
  }
}

function canonicalText(body: string): string {
  try {
    return canonicalJson(JSON.parse(body));
  } catch {
    return body;
  }
}

/** The reverse for `down`: composes each state snapshot again into acp_transactions.state_body. */
export async function joinStates(db: SqlKysely): Promise<void> {
  const memo = new WeakMap<object, string>();
  let after = '';
  for (;;) {
    const rows = (
      await db
        .selectFrom('acp_transactions as t')
        .innerJoin('acp_states as s', 's.transaction_id', 't.transaction_id')
        .select(['t.transaction_id', 't.state_envelope_id', 't.updated_at', 't.event_count', 's.body'])
        .where('t.transaction_id', '>', after)
        .orderBy('t.transaction_id')
        .limit(PAGE)
        .execute()
    ).map(HEAD_AND_BODY);
    const last = rows.at(-1);
    if (last === undefined) return;
    for (const row of rows) {
      const events = (
        await db
          .selectFrom('acp_events')
          .select('body')
          .where('transaction_id', '=', row.transaction_id)
          .where('seq', '<=', row.event_count)
          .orderBy('seq')
          .execute()
      ).map(EVENT_BODY);
      const meta = {
        envelopeId: row.state_envelope_id,
        transactionId: row.transaction_id,
        producedAt: row.updated_at,
      };
      let text: string;
      try {
        text = composeStateText(
          { meta, body: decodeStateBody(row.body), eventTexts: events.map((e) => e.body) },
          memo,
        );
      } catch {
        text = row.body;
      }
      await db
        .updateTable('acp_transactions')
        .set({ state_body: text })
        .where('transaction_id', '=', row.transaction_id)
        .execute();
    }
    after = last.transaction_id;
  }
}
