import { acpPart } from '../../a2a/acp/codec.js';
import { ACP_HEADER_KEYS } from '../../acpspec/constants.js';
import type { SnapshotEnvelope } from '../../acpspec/envelope.js';
import type { Check } from '../check.js';
import { A2aWire, type WirePart } from './a2a-wire.js';
import { declaredOf, needAccepts } from './card.js';
import { setupAck } from './expect.js';
import { broken, steps } from './outcome.js';
import { freshTransactionId, snapshotOf } from './samples.js';
import { describe } from './wire.js';

/** The envelope's header fields and its eight objects, apart. */
function split(envelope: SnapshotEnvelope): {
  header: Record<string, unknown>;
  body: Record<string, unknown>;
} {
  const header: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(envelope))
    (ACP_HEADER_KEYS.some((k) => k === key) ? header : body)[key] = value;
  return { header, body };
}

/** The non-conformant carriages of seed 001 "One Envelope, One DataPart", each built for its own transaction. */
const CARRIAGES: readonly {
  name: string;
  build(transactionId: string): { parts: WirePart[]; metadata?: Record<string, unknown> };
}[] = [
  {
    name: 'two envelopes in one data part',
    build: (tx) => ({ parts: [acpPart([snapshotOf(tx), snapshotOf(tx)])] }),
  },
  {
    name: 'two envelopes in two data parts',
    build: (tx) => ({ parts: [acpPart(snapshotOf(tx)), acpPart(snapshotOf(tx))] }),
  },
  {
    name: 'one envelope split over two data parts',
    build: (tx) => {
      const { header, body } = split(snapshotOf(tx));
      return { parts: [acpPart(header), acpPart(body)] };
    },
  },
  {
    name: "an envelope's header flattened into message metadata",
    build: (tx) => {
      const { header, body } = split(snapshotOf(tx));
      return { parts: [acpPart(body)], metadata: header };
    },
  },
];

/**
 * One envelope, one part (seed 001 "One Envelope, One DataPart": not flattened, not split, never two in
 * one message): each non-conformant carriage is refused with `ACP_MESSAGE_NONCONFORMANT` (design "A2A
 * binding") and leaves nothing behind — its transaction stays unknown. A well-formed message first shows
 * the agent receives snapshots at all.
 */
export const onePartCheck: Check = {
  id: 'acpspec-a2a-one-envelope-one-part',
  binding: 'acpspec-a2a',
  title: 'two envelopes, a split envelope or one flattened into metadata are refused and nothing is stored',
  spec: 'seed 001 "One Envelope, One DataPart"; design "A2A binding" (ACP_MESSAGE_NONCONFORMANT)',
  writes: true,
  run: (ctx) =>
    steps(async () => {
      needAccepts(declaredOf(ctx), 'snapshot');
      const wire = await A2aWire.open(ctx);
      setupAck(await wire.send(snapshotOf(freshTransactionId('one-part'))), 'a snapshot in one data part');
      for (const carriage of CARRIAGES) {
        const tx = freshTransactionId('one-part');
        const { parts, metadata } = carriage.build(tx);
        const reply = await wire.message(parts, metadata);
        if (reply.kind !== 'error' || reply.code !== 'ACP_MESSAGE_NONCONFORMANT')
          broken(`${carriage.name}: expected acp_error ACP_MESSAGE_NONCONFORMANT, got ${describe(reply)}`);
        const state = await wire.state(tx);
        if (state.kind !== 'error' || state.code !== 'ACP_TRANSACTION_UNKNOWN')
          broken(`${carriage.name}: refused, but the transaction's state then answered ${describe(state)}`);
      }
    }),
};
