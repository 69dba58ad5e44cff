import type express from 'express';
import { createAcpBinding } from '../../src/a2a/acp/receiver-binding.js';
import type { A2ABinding, BindingCall } from '../../src/a2a/binding.js';
import type { InboundMessage, InboundPart } from '../../src/a2a/part-codec.js';
import { ACP_HTTP_PREFIX, ACP_MEDIA_TYPE, type Kind } from '../../src/acpspec/constants.js';
import { createAcpReceiver, type AcpReceiver } from '../../src/acpspec/receiver.js';
import { mountAcpRoutes } from '../../src/http/acp-routes.js';
import type { HostModule, HttpGuards, ModuleContext, ModuleParts } from '../../src/server/module.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { isJsonObject } from '../../src/shared/json.js';
import { ACP_OWNER_COLUMNS, acpMigrations } from '../../src/storage/acpspec/acp-transaction-store-kysely.js';
import { createKyselyTransactionStore } from '../../src/storage/acpspec/acp-transaction-store-kysely.js';
import { MemoryTransactionStore } from '../../src/storage/memory/acp-transaction-store-memory.js';
import { RECEIVER } from '../acpspec/helpers.js';
import { MisbehavingReceiver, type ReceiverBreakage } from './misbehaving-receiver.js';

/** One ACPspec rule broken at a time (docs/conformance.md "ACPspec checks": each check can fail). */
export type AcpBreakage =
  | ReceiverBreakage
  | 'schema-url-404'
  | 'card-emits-empty'
  | 'kind-undeclared'
  | 'two-envelopes-accepted'
  | 'split-accepted'
  | 'flattened-accepted'
  | 'https-bytes';

const RECEIVER_BREAKAGES: readonly string[] = [
  'partial-ingest',
  'partial-snapshot',
  'parent-unknown-miscoded',
  'state-delta',
  'consent-upgrade',
  'event-rewritten',
  'pii-cleartext',
] satisfies ReceiverBreakage[];

function receiverBreakage(breakage: AcpBreakage): ReceiverBreakage | undefined {
  return RECEIVER_BREAKAGES.includes(breakage) ? (breakage as ReceiverBreakage) : undefined;
}

/** The lenient readings of a message, one per breakage of seed 001 "One Envelope, One DataPart". */
const LENIENT: Partial<Record<AcpBreakage, (message: InboundMessage) => InboundMessage>> = {
  // The first envelope of an array is taken.
  'two-envelopes-accepted': (message) => ({
    ...message,
    parts: message.parts.map((p) =>
      p.kind === 'data' && Array.isArray(p.data) ? { ...p, data: (p.data as unknown[])[0] } : p,
    ),
  }),
  // Every data part is merged into one envelope (two envelopes: the last wins; a split one: joined).
  'split-accepted': (message) =>
    message.parts.length < 2
      ? message
      : withData(
          message,
          message.parts.reduce<Record<string, unknown>>((all, p) => ({ ...all, ...dataOf(p) }), {}),
        ),
  // Header fields in the metadata are merged into the part's envelope.
  'flattened-accepted': (message) =>
    message.parts.length === 1 && Object.keys(message.metadata ?? {}).length > 0
      ? withData(message, { ...message.metadata, ...dataOf(message.parts[0]) })
      : message,
};

function dataOf(part: InboundPart | undefined): Record<string, unknown> {
  return part?.kind === 'data' && isJsonObject(part.data) ? part.data : {};
}

function withData(message: InboundMessage, data: Record<string, unknown>): InboundMessage {
  const part: InboundPart = { kind: 'data', data, mediaType: ACP_MEDIA_TYPE, metadata: undefined };
  return { ...message, parts: [part], metadata: undefined };
}

/** The binding with its card params or its message reading broken; everything else delegated. */
function brokenBinding(binding: A2ABinding, breakage: AcpBreakage): A2ABinding {
  const lenient = LENIENT[breakage];
  const read = (call: BindingCall): BindingCall =>
    lenient ? { ...call, message: lenient(call.message) } : call;
  return {
    id: binding.id,
    skills: binding.skills,
    get extension() {
      const extension = binding.extension;
      const params = { ...extension.params };
      if (breakage === 'schema-url-404') params['schema_url'] = `${String(params['schema_url'])}.missing`;
      if (breakage === 'card-emits-empty') params['emits'] = [];
      return { ...extension, params };
    },
    claims: (message) => binding.claims(message),
    sendMessage: (call) => binding.sendMessage(read(call)),
    sendMessageStream: (call) => binding.sendMessageStream(read(call)),
  };
}

/** The HTTPS state route answering `JSON.stringify` of the state instead of its canonical bytes. */
function mountNonCanonicalState(app: express.Express, receiver: AcpReceiver): void {
  app.get(`${ACP_HTTP_PREFIX}/transactions/:id/state`, (req, res, next) => {
    receiver.state(String(req.params.id)).then(
      ({ envelope }) => res.status(200).type(ACP_MEDIA_TYPE).send(JSON.stringify(envelope)),
      () => next(),
    );
  });
}

/** The ACPspec host module with one rule broken (see {@link AcpBreakage}); accepts both kinds. */
class BrokenAcpModule implements HostModule {
  readonly name = 'acpspec';
  readonly migrations = [acpMigrations];
  readonly ownerColumns = ACP_OWNER_COLUMNS;
  private readonly reference = acpModule({ producer: { ...RECEIVER } });

  constructor(private readonly breakage: AcpBreakage) {}

  check(context: { secure: boolean; noPersonalData: boolean }): void {
    this.reference.check?.(context);
  }

  start(context: ModuleContext): ModuleParts {
    const accepts: Kind[] = ['snapshot', 'delta'];
    const inner = createAcpReceiver({
      store: context.database ? createKyselyTransactionStore(context.database) : new MemoryTransactionStore(),
      accepts,
      receiverAgentId: RECEIVER.agent_id,
      producer: { ...RECEIVER },
      clock: context.clock,
    });
    const receiver = new MisbehavingReceiver(inner, receiverBreakage(this.breakage));
    const binding = createAcpBinding({
      receiver,
      accepts: this.breakage === 'kind-undeclared' ? ['snapshot'] : accepts,
      emits: ['snapshot'],
      secure: context.secure,
      baseUrl: context.baseUrl,
    });
    const breakage = this.breakage;
    return {
      binding: brokenBinding(binding, breakage),
      mountHttp(app: express.Express, guards: HttpGuards) {
        if (breakage === 'https-bytes') mountNonCanonicalState(app, receiver);
        mountAcpRoutes(app, { receiver, secure: context.secure, ...guards });
      },
    };
  }
}

/** A host module serving ACPspec with `breakage`. */
export function brokenAcpModule(breakage: AcpBreakage): HostModule {
  return new BrokenAcpModule(breakage);
}
