import type { Check, ConformContext } from '../check.js';
import { A2aWire, sdkCardOf } from './a2a-wire.js';
import { declaredOf } from './card.js';
import { expectCode, type AcpBinding } from './expect.js';
import { HttpsWire } from './https-wire.js';
import { need, steps } from './outcome.js';
import { freshTransactionId, personalSnapshot } from './samples.js';
import type { AcpWire } from './wire.js';

const SPEC = 'seed 001 "The Conformance Rule That Decides Everything" (personal data travels over TLS)';

/** Personal data sent in cleartext is refused with `ACP_TRANSPORT_INSECURE` and its transaction stays unknown. */
async function refusesPersonalData(wire: AcpWire, where: string): Promise<void> {
  const envelope = personalSnapshot(freshTransactionId('cleartext'));
  expectCode(await wire.send(envelope), 'ACP_TRANSPORT_INSECURE', `personal data over ${where}`);
  expectCode(
    await wire.state(envelope.transaction_id),
    'ACP_TRANSACTION_UNKNOWN',
    `the state after refusing personal data over ${where}`,
  );
}

/** Every cleartext (`http:`) A2A interface of the card the SDK's v1.0 client can use (gRPC's TLS is the client's choice). */
async function cleartextInterfaces(
  ctx: ConformContext,
): Promise<Awaited<ReturnType<typeof sdkCardOf>>['supportedInterfaces']> {
  const card = await sdkCardOf(ctx);
  return card.supportedInterfaces.filter(
    (i) => i.protocolBinding !== 'GRPC' && !i.protocolVersion.startsWith('0.') && i.url.startsWith('http:'),
  );
}

/**
 * No personal data accepted over a non-TLS endpoint (seed 001: envelopes carrying personal data travel
 * over TLS; docs/acpspec-binding.md "Personal data and TLS": `ACP_TRANSPORT_INSECURE`). The rule is checked where it can
 * be observed: on every cleartext interface the card lists (A2A) or on a cleartext base URL (HTTPS) an
 * envelope with personal data and evidenced consent must be refused and leave nothing behind. An agent
 * reached only over TLS skips the check: there is no cleartext endpoint to try (docs/conformance.md).
 */
export function cleartextCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-no-pii-cleartext`,
    binding,
    title: 'an envelope with personal data is refused over a cleartext endpoint (ACP_TRANSPORT_INSECURE)',
    spec: SPEC,
    writes: true,
    run: (ctx) =>
      steps(async () => {
        declaredOf(ctx);
        if (binding === 'acpspec-https') {
          const wire = await HttpsWire.open(ctx);
          need(!wire.secure, 'the HTTPS binding is reached over TLS: no cleartext endpoint to try');
          await refusesPersonalData(wire, 'cleartext HTTP');
          return;
        }
        const cleartext = await cleartextInterfaces(ctx);
        need(cleartext.length > 0, 'every A2A interface on the card is https: no cleartext endpoint to try');
        for (const iface of cleartext)
          await refusesPersonalData(await A2aWire.open(ctx, iface), `${iface.protocolBinding} ${iface.url}`);
      }),
  };
}
