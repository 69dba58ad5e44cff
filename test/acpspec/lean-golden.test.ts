import { beforeAll, describe, expect, it } from 'vitest';
import type { SendMessageRequest } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ACP_EXTENSION_URI, ACP_PART_KEYS } from '../../src/acpspec/constants.js';
import { acpPart } from '../../src/a2a/acp/codec.js';
import { encodeUserMessage } from '../../src/a2a/part-codec.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import {
  anonymousState,
  delta,
  envelopeIdFor,
  eventOp,
  fixedClock,
  sequentialIds,
  snapshot,
} from '../helpers/acp-builders.js';
import { startTestHost } from '../helpers/host.js';
import { clientFor, countingIds, exchangesOf, settle, WIRES, type Exchange } from '../helpers/lean-golden.js';
import { RECEIVER } from './helpers.js';

/**
 * ACPspec over A2A takes the lean path too (src/a2a/host/lean-invoke.ts: a message a binding claims, with
 * that binding's extension requested), byte for byte as the SDK's path answers it, on JSON-RPC and
 * HTTP+JSON (the harness: test/helpers/lean-golden.ts). Both hosts run on one fixed clock and draw the
 * receiver's state ids from one sequence, so acks and states compare exactly.
 */

async function host(leanInvoke: boolean): Promise<{ url: string }> {
  const module = acpModule({ producer: { ...RECEIVER }, stateIds: sequentialIds(0x9000) });
  return startTestHost({
    modules: [module],
    leanInvoke,
    clock: fixedClock(),
    ids: countingIds(),
    flags: { 'no-personal-data': true },
  });
}

let seq = 0;

/** A send of one ACPspec data part (an envelope or a state request), as the ACPspec client builds it. */
function acpSend(data: object): SendMessageRequest {
  return {
    tenant: '',
    message: encodeUserMessage({
      messageId: `m-acp-${++seq}`,
      parts: [acpPart(data)],
      extensions: [ACP_EXTENSION_URI],
    }),
    configuration: undefined,
    metadata: undefined,
  };
}

const ACTIVATED = { serviceParameters: { 'A2A-Extensions': ACP_EXTENSION_URI } };

describe.each(WIRES)('ACPspec: lean path vs the SDK path, %s A2A %s, byte for byte', (binding, version) => {
  const log: Exchange[] = [];
  let client: Client;
  // One range of envelope ids per wire: the four describe blocks share no envelope.
  const base = 0x100 * (WIRES.findIndex(([b, v]) => b === binding && v === version) + 1);
  const transactionId = `tx-golden-${binding}-${version}`;
  const first = snapshot({
    transaction_id: transactionId,
    envelope_id: envelopeIdFor(base + 1),
    state: anonymousState(),
  });
  const next = delta(first, [eventOp(`ev-${base}-2`)], { envelope_id: envelopeIdFor(base + 2) });

  beforeAll(async () => {
    const [lean, sdk] = await Promise.all([host(true), host(false)]);
    client = await clientFor({ lean: lean.url, sdk: sdk.url }, { binding, version }, log);
  });

  const send = (data: object): Promise<void> => settle(client.sendMessage(acpSend(data), ACTIVATED));
  const cases: [string, () => Promise<void>][] = [
    ['an accepted snapshot', () => send(first)],
    ['the same snapshot again (a duplicate)', () => send(first)],
    ['a delta on it', () => send(next)],
    [
      'a delta on a parent the receiver does not know',
      () =>
        send(
          delta(first, [eventOp('ev-x')], {
            parent_envelope_id: envelopeIdFor(base + 0x50),
            envelope_id: envelopeIdFor(base + 3),
          }),
        ),
    ],
    [
      'an envelope the schema refuses',
      () => send({ ...first, envelope_id: envelopeIdFor(base + 4), kind: 'nope' }),
    ],
    [
      'personal data to a host that declares none',
      () => send(snapshot({ transaction_id: `${transactionId}-pd`, envelope_id: envelopeIdFor(base + 5) })),
    ],
    ['a state request', () => send({ [ACP_PART_KEYS.stateRequest]: { transaction_id: transactionId } })],
    ['the extension not activated', () => settle(client.sendMessage(acpSend(first)))],
    ['an envelope on a stream', () => settle(client.sendMessageStream(acpSend(next), ACTIVATED))],
  ];

  it.each(cases)('answers %s identically', async (_name, run) => {
    for (const exchange of await exchangesOf(log, run))
      expect(exchange.lean, exchange.request).toBe(exchange.sdk);
  });
});
