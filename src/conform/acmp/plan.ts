import { readCapabilitySkill } from '../../acmp/provider/capability-summary.js';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import type { Payload } from '../../acmp/wire/task-messages.js';
import { boundedTaskIds } from '../../shared/ids.js';
import { isJsonObject } from '../../shared/json.js';
import type { ConformContext } from '../check.js';
import { endpointsOf, type Endpoint, type WireTransport } from './wire.js';

/**
 * What the ACMP checks read from the card before they call: the extension entry, the JSON-RPC endpoint,
 * and the capability and input the wire checks invoke.
 */

type Json = Record<string, unknown>;

/** The card's ACMP extension entry (seed 000 §2), if any. */
export function acmpExtension(card: unknown): Json | undefined {
  const capabilities = isJsonObject(card) && isJsonObject(card.capabilities) ? card.capabilities : undefined;
  const list = capabilities && Array.isArray(capabilities.extensions) ? capabilities.extensions : [];
  return list.find((e): e is Json => isJsonObject(e) && e.uri === ACMP_EXTENSION_URI);
}

/** The capability object (`params` of the extension entry), if it is an object. */
export function capabilityObject(card: unknown): Json | undefined {
  const params = acmpExtension(card)?.params;
  return isJsonObject(params) ? params : undefined;
}

/** The `features` of the card's capability object (empty when absent). */
export function features(card: unknown): Json {
  const f = capabilityObject(card)?.features;
  return isJsonObject(f) ? f : {};
}

/** The capability the wire checks invoke, the input they send, and where. */
export interface InvokePlan {
  readonly endpoint: Endpoint;
  readonly capability: string;
  readonly input: Payload;
  /** A fixed price the skill states (`Price: <n> CU`), when it states one. */
  readonly statedPriceCu?: number;
}

/** The card's skills that serve ACMP: media type in their input modes, or an `acmp` tag. */
function acmpSkills(card: unknown): Json[] {
  const skills = isJsonObject(card) && Array.isArray(card.skills) ? card.skills : [];
  return skills.filter(
    (s): s is Json =>
      isJsonObject(s) &&
      typeof s.id === 'string' &&
      ((Array.isArray(s.inputModes) && s.inputModes.includes(ACMP_MEDIA_TYPE)) ||
        (Array.isArray(s.tags) && s.tags.includes('acmp'))),
  );
}

/**
 * The plan over one transport, or why there is none: no v1.0 interface for it, no ACMP skill with an example input (the
 * kit sends only inputs the agent itself publishes), or the operator's `acmpCapability` is not listed.
 */
export function invokePlan(ctx: ConformContext, transport: WireTransport): InvokePlan | string {
  const endpoint = endpointsOf(ctx.card).find((e) => e.transport === transport);
  if (endpoint === undefined) return `the card lists no A2A v1.0 ${transport} interface`;
  const skills = acmpSkills(ctx.card).filter((s) => !ctx.acmpCapability || s.id === ctx.acmpCapability);
  for (const skill of skills) {
    const info = readCapabilitySkill({
      description: typeof skill.description === 'string' ? skill.description : '',
      examples: Array.isArray(skill.examples) ? skill.examples.filter((e) => typeof e === 'string') : [],
    });
    const [input] = info.examples;
    if (input === undefined) continue;
    const fixed = /^([0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?) CU$/.exec(info.price ?? '')?.[1];
    return {
      endpoint,
      capability: skill.id as string,
      input,
      ...(fixed !== undefined ? { statedPriceCu: Number(fixed) } : {}),
    };
  }
  return ctx.acmpCapability
    ? `the card lists no ACMP skill "${ctx.acmpCapability}" with an example input`
    : 'the card lists no ACMP skill with an example input';
}

/** A fresh, globally unique task id (Layer 1 §3.1: the kit never reuses one). */
export function freshTaskId(): string {
  return boundedTaskIds.newId('task');
}

/** An A2A v1.0 user message carrying one ACMP request root, `taskId` set as seed 000 §1 asks. */
export function acmpMessage(root: { acmp_method: string; params: Json & { task_id: string } }): Json {
  return {
    messageId: `msg_${crypto.randomUUID()}`,
    role: 'ROLE_USER',
    taskId: root.params.task_id,
    parts: [{ data: root, mediaType: ACMP_MEDIA_TYPE }],
  };
}
