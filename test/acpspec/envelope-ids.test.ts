import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/shared/jcs.js';
import { anonymousState, eventOp } from '../helpers/acp-builders.js';
import { cleanup } from '../helpers/host.js';
import {
  dataPart,
  errorCode,
  freshDelta,
  freshSnapshot,
  postEnvelope,
  sendRaw,
  startAcpHost,
  txId,
  userMessage,
} from './helpers.js';

afterEach(cleanup);

describe('envelope ids are unique across the store (issue 9; design "Deltas")', () => {
  it('refuses a client envelope reusing a state snapshot id the receiver minted, on both bindings', async () => {
    const host = await startAcpHost();
    const first = freshSnapshot(txId('ids-a'), anonymousState());
    const ack = (await postEnvelope(host, canonicalJson(first))).body['acp_ack'] as {
      state_envelope_id: string;
    };
    const elsewhere = {
      ...freshSnapshot(txId('ids-b'), anonymousState()),
      envelope_id: ack.state_envelope_id,
    };
    const overHttps = await postEnvelope(host, canonicalJson(elsewhere));
    expect(overHttps.status).toBe(409);
    expect(overHttps.body['acp_error']).toMatchObject({ code: 'ACP_ENVELOPE_CONFLICT', retryable: false });
    expect(errorCode(await sendRaw(host, userMessage([dataPart(elsewhere)])))).toBe('ACP_ENVELOPE_CONFLICT');
    const sameTransaction = {
      ...freshDelta(first, [eventOp('ev-ids-1')]),
      envelope_id: ack.state_envelope_id,
    };
    expect(errorCode(await sendRaw(host, userMessage([dataPart(sameTransaction)])))).toBe(
      'ACP_ENVELOPE_CONFLICT',
    );
    const onReused = freshDelta(elsewhere, [eventOp('ev-ids-2')]);
    expect(errorCode(await sendRaw(host, userMessage([dataPart(onReused)])))).toBe('ACP_PARENT_UNKNOWN');
  });
});
