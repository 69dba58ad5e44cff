import { ACMP_MEDIA_TYPE, ACMP_METHOD } from '../../acmp/wire/constants.js';
import { CapabilityObjectSchema } from '../../acmp/wire/messages.js';
import { isJsonObject } from '../../shared/json.js';
import { fail, pass, type Check, type CheckOutcome } from '../check.js';
import { brief, list } from './inspect.js';
import { acmpExtension, capabilityObject, features } from './plan.js';

/** The ACMP checks of the agent card (seed 000 §2, §3.2, §3.3; Layer 1 §1). None of them calls the agent. */

type Json = Record<string, unknown>;

const outcome = (problems: string[]): CheckOutcome => (problems.length ? fail(problems.join('; ')) : pass());

const paramsShape: Check = {
  id: 'acmp-a2a-card-params',
  binding: 'acmp-a2a',
  title:
    'The ACMP extension params are the Layer 1 §1 capability object (version, role, accepts, emits, features)',
  spec: 'seed 000 §2 (line 50, 77); Layer 1 §1',
  run: (ctx) => {
    const params = capabilityObject(ctx.card);
    if (!params)
      return Promise.resolve(fail(`extension params are ${brief(acmpExtension(ctx.card)?.params)}`));
    const parsed = CapabilityObjectSchema.safeParse(params);
    const problems = parsed.success
      ? []
      : parsed.error.issues.map((i) => `params.${i.path.join('.')}: ${i.message}`);
    if (parsed.success && parsed.data.role !== 'provider')
      problems.push(`params.role is "${parsed.data.role}", a serving agent is "provider"`);
    if (parsed.success && !parsed.data.accepts.includes(ACMP_METHOD.invoke))
      problems.push('params.accepts does not list acmp/invoke');
    return Promise.resolve(outcome(problems));
  },
};

const emitsMatchFeatures: Check = {
  id: 'acmp-a2a-card-emits',
  binding: 'acmp-a2a',
  title:
    'emits lists acmp/streamChunk only with output_streaming, acmp/heartbeat only with heartbeat_interval_ms',
  spec: 'Layer 1 §1 (emits); seed 000 §2 (line 77)',
  run: (ctx) => {
    const params = capabilityObject(ctx.card);
    const emits = Array.isArray(params?.emits) ? params.emits : [];
    const f = features(ctx.card);
    const problems: string[] = [];
    if (emits.includes(ACMP_METHOD.streamChunk) && f.output_streaming !== true)
      problems.push('emits acmp/streamChunk without features.output_streaming: true');
    if (emits.includes(ACMP_METHOD.heartbeat) && f.heartbeat_interval_ms === undefined)
      problems.push('emits acmp/heartbeat without features.heartbeat_interval_ms');
    return Promise.resolve(outcome(problems));
  },
};

const noInputStreaming: Check = {
  id: 'acmp-a2a-card-input-streaming',
  binding: 'acmp-a2a',
  title: 'The capability object advertises input_streaming: false and does not accept acmp/inputChunk',
  spec: 'seed 000 §3.3 (line 93)',
  run: (ctx) => {
    const params = capabilityObject(ctx.card);
    const problems: string[] = [];
    const value = features(ctx.card).input_streaming;
    if (value !== false)
      problems.push(`features.input_streaming is ${brief(value)}, the binding requires false`);
    if (Array.isArray(params?.accepts) && params.accepts.includes(ACMP_METHOD.inputChunk))
      problems.push('accepts lists acmp/inputChunk');
    return Promise.resolve(outcome(problems));
  },
};

/** Whether the card also serves plain A2A clients: an input mode other than the ACMP media type. */
function servesPlainA2A(card: Json): boolean {
  const modes = [
    ...list(card.defaultInputModes),
    ...list(card.skills).flatMap((s) => (isJsonObject(s) ? list(s.inputModes) : [])),
  ];
  return modes.some((m) => m !== ACMP_MEDIA_TYPE);
}

const requiredFlag: Check = {
  id: 'acmp-a2a-card-required',
  binding: 'acmp-a2a',
  title: 'required is a boolean, and true only on a card that serves ACMP exclusively (SHOULD)',
  spec: 'seed 000 §2 (line 77)',
  run: (ctx) => {
    const required = acmpExtension(ctx.card)?.required;
    if (required !== undefined && typeof required !== 'boolean')
      return Promise.resolve(fail(`required is ${brief(required)}, not a boolean`));
    if (required === true && isJsonObject(ctx.card) && servesPlainA2A(ctx.card))
      return Promise.resolve(
        fail('required is true but the card lists input modes other than application/acmp+json'),
      );
    return Promise.resolve(pass());
  },
};

const streamingDeclared: Check = {
  id: 'acmp-a2a-card-streaming',
  binding: 'acmp-a2a',
  title: 'A card that emits chunks or heartbeats declares capabilities.streaming: true (they travel on SSE)',
  spec: 'seed 000 §3.2 (line 89)',
  run: (ctx) => {
    const f = features(ctx.card);
    const needs = f.output_streaming === true || f.heartbeat_interval_ms !== undefined;
    const caps = isJsonObject(ctx.card) && isJsonObject(ctx.card.capabilities) ? ctx.card.capabilities : {};
    return Promise.resolve(
      needs && caps.streaming !== true
        ? fail(`capabilities.streaming is ${brief(caps.streaming)} while the features stream`)
        : pass(),
    );
  },
};

const KNOWN_BINDINGS = ['JSONRPC', 'HTTP+JSON', 'GRPC'];

/** Problems of the card's interface list, v1.0 `supportedInterfaces` against the v0.3 fields. */
function interfaceProblems(card: Json): string[] {
  const interfaces = list(card.supportedInterfaces);
  if (interfaces.length === 0) return ['supportedInterfaces is empty or missing'];
  const problems: string[] = [];
  const listed = new Set<string>();
  interfaces.forEach((i, n) => {
    if (!isJsonObject(i) || typeof i.url !== 'string' || typeof i.protocolBinding !== 'string')
      return void problems.push(`supportedInterfaces[${n}] lacks url or protocolBinding`);
    if (!KNOWN_BINDINGS.includes(i.protocolBinding))
      problems.push(`supportedInterfaces[${n}].protocolBinding "${i.protocolBinding}" is not an A2A binding`);
    if (typeof i.protocolVersion !== 'string')
      problems.push(`supportedInterfaces[${n}] lacks protocolVersion`);
    if (i.protocolBinding !== 'GRPC' && !/^https?:\/\//.test(i.url))
      problems.push(`supportedInterfaces[${n}].url "${i.url}" is not an absolute http(s) URL`);
    listed.add(`${i.protocolBinding} ${i.url}`);
  });
  // v0.3 fields, when present, must name interfaces the v1.0 list has too.
  const legacy = [
    ...(typeof card.url === 'string' && typeof card.preferredTransport === 'string'
      ? [{ url: card.url, transport: card.preferredTransport }]
      : []),
    ...list(card.additionalInterfaces),
  ];
  for (const l of legacy)
    if (isJsonObject(l) && !listed.has(`${String(l.transport)} ${String(l.url)}`))
      problems.push(`v0.3 interface ${brief(l)} is not in supportedInterfaces`);
  return problems;
}

const interfacesConsistent: Check = {
  id: 'acmp-a2a-card-interfaces',
  binding: 'acmp-a2a',
  title:
    'The card lists its transports consistently (known bindings, absolute URLs, v0.3 fields in the v1.0 list)',
  spec: 'A2A v1.0 §5 (AgentInterface); seed 000 Scope (substrate A2A v1.0.1)',
  run: (ctx) => Promise.resolve(outcome(isJsonObject(ctx.card) ? interfaceProblems(ctx.card) : ['no card'])),
};

/** The card checks, in report order. */
export const cardChecks: readonly Check[] = [
  paramsShape,
  emitsMatchFeatures,
  noInputStreaming,
  requiredFlag,
  streamingDeclared,
  interfacesConsistent,
];
