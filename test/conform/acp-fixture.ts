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
import { ACP_OWNER_COLUMNS, acpMigrations } from '../../src/storage/acp-transaction-store-kysely.js';
import { createKyselyTransactionStore } from '../../src/storage/acp-transaction-store-kysely.js';
import { MemoryTransactionStore } from '../../src/storage/acp-transaction-store-memory.js';
import { RECEIVER } from '../acpspec/helpers.js';
import { MisbehavingReceiver, type ReceiverBreakage } from './misbehaving-receiver.js';

/** One ACPspec rule broken at a time (docs/conformance.md "ACPspec checks": each check can fail). */
export type AcpBreakage =
  | ReceiverBreakage
  | 'schema-url-404'
  | 'card-emits-empty'
  | 'kind-undeclared'
  | 'two-envelopes-accepted'
  | 'https-bytes';

const RECEIVER_BREAKAGES: readonly string[] = [
  'partial-ingest',
  'parent-unknown-miscoded',
  'state-delta',
  'consent-upgrade',
  'event-rewritten',
  'pii-cleartext',
] satisfies ReceiverBreakage[];

function receiverBreakage(breakage: AcpBreakage): ReceiverBreakage | undefined {
  return RECEIVER_BREAKAGES.includes(breakage) ? (breakage as ReceiverBreakage) : undefined;
}

/** A lenient receiver's reading of a message: every data part (and the metadata) merged into one envelope. */
function merged(message: InboundMessage): InboundMessage {
  const data: Record<string, unknown> = { ...message.metadata };
  for (const part of message.parts) {
    const value: unknown =
      part.kind === 'data' ? (Array.isArray(part.data) ? (part.data as unknown[])[0] : part.data) : undefined;
    if (isJsonObject(value)) Object.assign(data, value);
  }
  const part: InboundPart = { kind: 'data', data, mediaType: ACP_MEDIA_TYPE, metadata: undefined };
  return { ...message, parts: [part], metadata: undefined };
}

/** The binding with its card params or its message reading broken; everything else delegated. */
function brokenBinding(binding: A2ABinding, breakage: AcpBreakage): A2ABinding {
  const read = (call: BindingCall): BindingCall =>
    breakage === 'two-envelopes-accepted' ? { ...call, message: merged(call.message) } : call;
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
