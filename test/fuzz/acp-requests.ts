import fc from 'fast-check';
import { ACP_MEDIA_TYPE } from '../../src/acpspec/constants.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, eventOp, leadState, producer, SENDER_AGENT_ID } from '../helpers/acp-builders.js';
import { buildDelta, buildSnapshot } from '../../src/acpspec/envelope.js';
import { deepText, either, idText, jsonText, nastyScalarText, obj, pathIdArb, str } from './json-text.js';
import { bodyBytes, type FuzzRequest } from './request.js';

/**
 * ACPspec payloads and requests for the HTTPS routes: envelopes built from the test builders (so most
 * pass the schema and reach the pipeline and the store), then one value replaced by anything.
 */

/** Transactions the fuzzer returns to, so reads and deltas meet held state. */
const TRANSACTION_POOL = ['tx-fuzz-1', 'tx-fuzz-2', 'tx-fuzz-3'];
const PLACEHOLDER = '"__fuzz__"';

const envelopeId = fc
  .stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  .map((u) => `urn:uuid:${u}`);
const transactionId = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...TRANSACTION_POOL) },
  { weight: 1, arbitrary: fc.stringMatching(/^tx-[a-z0-9]{1,12}$/) },
);
/** What replaces the placeholder: ordinary data mostly, values outside the profile sometimes. */
const replacement = fc.oneof(
  { weight: 4, arbitrary: jsonText },
  { weight: 2, arbitrary: nastyScalarText },
  { weight: 1, arbitrary: deepText },
);

const snapshotText = fc
  .record({
    transactionId,
    envelopeId,
    personal: fc.boolean(),
    where: fc.constantFrom('event-data', 'transaction-id', 'quote', 'none'),
    value: replacement,
  })
  .map(({ transactionId: tx, envelopeId: id, personal, where, value }) => {
    const event = {
      event_id: 'ev-1',
      type: 'lead.created',
      occurred_at: '2025-06-01T11:58:00Z',
      actor: SENDER_AGENT_ID,
      subject: '/transaction',
      data: { x: '__fuzz__' },
    };
    const state = personal ? leadState({ events: [event] }) : anonymousState({ events: [event] });
    const envelope = buildSnapshot({
      transaction_id: where === 'transaction-id' ? '__fuzz__' : tx,
      producer: producer(),
      state,
      envelope_id: id,
      produced_at: '2025-06-01T12:00:00Z',
    });
    const text = canonicalJson(where === 'quote' ? { ...envelope, quote: '__fuzz__' } : envelope);
    // Without a replacement the event data holds the placeholder string itself: a valid envelope.
    return where === 'none' ? text : text.replace(PLACEHOLDER, value);
  });

const deltaText = fc
  .record({ transactionId, envelopeId, parent: envelopeId, value: replacement, valid: fc.boolean() })
  .map(({ transactionId: tx, envelopeId: id, parent, value, valid }) => {
    const patch = [
      eventOp(`ev-${id.slice(-6)}`),
      { op: 'add' as const, path: '/quote/note', value: '__fuzz__' },
    ];
    const envelope = buildDelta({
      transaction_id: tx,
      producer: producer(),
      parent_envelope_id: parent,
      patch,
      envelope_id: id,
      produced_at: '2025-06-01T12:05:00Z',
    });
    const text = canonicalJson(envelope);
    return valid ? text : text.replace(PLACEHOLDER, value);
  });

/** An ACPspec envelope as text (or the state request, or anything). */
export const envelopeText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: snapshotText },
  { weight: 2, arbitrary: deltaText },
  {
    weight: 1,
    arbitrary: fc
      .oneof(idText, fc.constantFrom(...TRANSACTION_POOL).map(str))
      .map((id) => obj([['acp_state_request', obj([['transaction_id', id]])]])),
  },
  { weight: 1, arbitrary: jsonText },
);

/** An ACMP data payload (`acmp/invoke`, `acmp/cancel`); never the slow capability, so no task runs long. */
export const acmpDataText: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      task_id: either(fc.stringMatching(/^task_[a-z0-9]{1,12}$/).map(str)),
      capability: fc.constantFrom('"sentiment-analysis"', '"summarize"', '"no-such"', '1'),
      input: either(
        fc.string({ maxLength: 40 }).map((t) =>
          obj([
            ['type', '"text"'],
            ['data', str(t)],
          ]),
        ),
      ),
      max_price_cu: either(fc.constantFrom('0.01', '1', '0')),
      stream: fc.constantFrom(undefined, 'true', 'false'),
    })
    .map((params) =>
      obj([
        ['acmp_method', '"acmp/invoke"'],
        ['params', obj(Object.entries(params))],
      ]),
    ),
  idText.map((id) =>
    obj([
      ['acmp_method', '"acmp/cancel"'],
      ['params', obj([['task_id', id]])],
    ]),
  ),
);

const readPath = fc.oneof(fc.constantFrom(...TRANSACTION_POOL), pathIdArb);
const afterLimit = fc
  .record({
    after: fc.constantFrom(undefined, '0', '1', '-1', 'x', '1e400', '9007199254740993'),
    limit: fc.constantFrom(undefined, '1', '0', '1000000', 'abc'),
  })
  .map(({ after, limit }) => {
    const pairs = [
      after === undefined ? '' : `after=${after}`,
      limit === undefined ? '' : `limit=${limit}`,
    ].filter((p) => p !== '');
    return pairs.length === 0 ? '' : `?${pairs.join('&')}`;
  });

/** A request to the ACPspec HTTPS routes (never an SSE follow of a transaction that may exist). */
export const acpRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    weight: 6,
    arbitrary: envelopeText.chain(bodyBytes).map(({ body, headers }): FuzzRequest => ({
      endpoint: 'acp',
      method: 'POST',
      path: '/acp/v0.1/envelopes',
      headers: { 'content-type': ACP_MEDIA_TYPE, ...headers },
      body,
    })),
  },
  {
    weight: 1,
    arbitrary: readPath.map((id): FuzzRequest => ({
      endpoint: 'acp',
      method: 'GET',
      path: `/acp/v0.1/transactions/${id}/state`,
      headers: {},
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(readPath, afterLimit).map(([id, q]): FuzzRequest => ({
      endpoint: 'acp',
      method: 'GET',
      path: `/acp/v0.1/transactions/${id}/events${q}`,
      headers: { accept: 'application/json' },
    })),
  },
  {
    weight: 1,
    arbitrary: pathIdArb
      .filter((id) => !TRANSACTION_POOL.includes(id))
      .map((id): FuzzRequest => ({
        endpoint: 'acp',
        method: 'GET',
        path: `/acp/v0.1/transactions/x${id}/events`,
        headers: { accept: 'text/event-stream' },
      })),
  },
);
