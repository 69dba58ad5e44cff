import { canonicalBytes } from '../../shared/jcs.js';
import type { Check } from '../check.js';
import { A2aWire } from './a2a-wire.js';
import { declaredOf, needAccepts } from './card.js';
import { setupAck, setupState } from './expect.js';
import { HttpsWire } from './https-wire.js';
import { broken, steps } from './outcome.js';
import { deltaOn, freshTransactionId, snapshotOf } from './samples.js';
import { describe } from './wire.js';

/** Where two byte strings first differ, for evidence. */
function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (bytes: Buffer): string =>
    JSON.stringify(bytes.subarray(Math.max(0, i - 20), i + 20).toString('utf8'));
  return `first difference at byte ${i} (A2A ${a.length} bytes, HTTPS ${b.length}): A2A …${around(a)}…, HTTPS …${around(b)}…`;
}

/** The state over both bindings: the HTTPS body must be exactly the canonical bytes of the A2A part's data. */
async function compareState(a2a: A2aWire, https: HttpsWire, transactionId: string): Promise<void> {
  const overA2a = await setupState(a2a, transactionId);
  const overHttps = await https.state(transactionId);
  if (overHttps.kind !== 'data' || overHttps.bytes === undefined)
    broken(`the HTTPS state request answered ${describe(overHttps)} where A2A answered the state`);
  const expected = canonicalBytes(overA2a);
  if (!expected.equals(overHttps.bytes)) broken(firstDifference(expected, overHttps.bytes));
}

/**
 * Byte-identical state over both bindings (seed 001 "The Conformance Rule That Decides Everything": an
 * implementation must produce identical envelopes on the A2A and HTTPS bindings for the same state). The
 * A2A part is re-serialised by the SDK, so identity is on its data's RFC 8785 form (docs/acpspec-binding.md
 * "Canonical bytes"): the HTTPS state body must be exactly those bytes — after a snapshot sent over A2A
 * and, when deltas are accepted, after a delta sent over HTTPS.
 */
export const bytesCheck: Check = {
  id: 'acpspec-bytes-identical',
  binding: 'acpspec-https',
  title: 'A2A and HTTPS answer byte-identical state for the same transaction',
  spec: 'seed 001 "The Conformance Rule That Decides Everything" (byte-identical envelopes)',
  writes: true,
  run: (ctx) =>
    steps(async () => {
      const declared = declaredOf(ctx);
      needAccepts(declared, 'snapshot');
      const https = await HttpsWire.open(ctx);
      const a2a = await A2aWire.open(ctx);
      const snapshot = snapshotOf(freshTransactionId('bytes'));
      setupAck(await a2a.send(snapshot), 'a snapshot over A2A');
      await compareState(a2a, https, snapshot.transaction_id);
      if (!declared.accepts.includes('delta')) return;
      const delta = deltaOn(snapshot, [{ op: 'replace', path: '/transaction/stage', value: 'quote' }]);
      setupAck(await https.send(delta), 'a delta over HTTPS');
      await compareState(a2a, https, snapshot.transaction_id);
    }),
};
