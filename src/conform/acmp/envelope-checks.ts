import { ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { isJsonObject } from '../../shared/json.js';
import { fail, pass, skip, type Check, type CheckOutcome, type ConformContext } from '../check.js';
import { acmpParts, brief, mediaTypeOf, type SeenPart } from './inspect.js';
import { refusalProbe, streamProbe } from './probes.js';
import { perTransport, type WireCheck } from './transports.js';
import type { WireExchange, WireTransport } from './wire.js';

/**
 * The envelope rules of seed 000 §1, judged on every ACMP part the agent sent or echoed: the -33001
 * refusal (free) and, when the budget allows, the paid streaming invoke.
 */

type Json = Record<string, unknown>;

/** The exchanges the envelope checks judge, with a note when the paid one could not run. */
async function judged(
  ctx: ConformContext,
  t: WireTransport,
): Promise<{ exchanges: WireExchange[]; note?: string } | string> {
  const refusal = await refusalProbe(ctx, t);
  if (typeof refusal === 'string') return refusal;
  const stream = await streamProbe(ctx, t);
  if (typeof stream === 'string') return { exchanges: [refusal.exchange], note: `refusal only (${stream})` };
  return { exchanges: [refusal.exchange, stream.exchange] };
}

/** A check over every ACMP part: `problem` says what is wrong with one part, or nothing. */
function partCheck(meta: Omit<Check, 'run'>, problem: (part: SeenPart) => string | undefined): WireCheck {
  return {
    ...meta,
    run: async (ctx, t): Promise<CheckOutcome> => {
      const seen = await judged(ctx, t);
      if (typeof seen === 'string') return skip(seen);
      const parts = acmpParts(seen.exchanges);
      if (parts.length === 0) return fail('the agent answered no ACMP data part at all');
      const problems = parts.flatMap((p) => problem(p) ?? []);
      if (problems.length === 0) return pass();
      return fail(
        `${problems.length} of ${parts.length} ACMP parts: ${[...new Set(problems)].slice(0, 3).join('; ')}`,
      );
    },
  };
}

const mediaType = partCheck(
  {
    id: 'acmp-a2a-media-type',
    binding: 'acmp-a2a',
    title: 'Every data part carrying an ACMP message has media type application/acmp+json',
    spec: 'seed 000 §1 (line 43)',
  },
  (p) => {
    const type = mediaTypeOf(p.part);
    return type === ACMP_MEDIA_TYPE ? undefined : `${p.message.where} part has media type ${brief(type)}`;
  },
);

/** Why a root is not one of the binding's three shapes, or nothing. */
function rootProblem(root: Json): string | undefined {
  const keys = Object.keys(root).sort();
  if ('acmp_method' in root) {
    if (keys.join() !== 'acmp_method,params') return `request root has keys ${keys.join(', ')}`;
    if (typeof root.acmp_method !== 'string' || !isJsonObject(root.params))
      return 'request root needs a string acmp_method and an object params';
    return undefined;
  }
  if (keys.length !== 1 || (keys[0] !== 'acmp_result' && keys[0] !== 'acmp_error'))
    return `response root has keys ${keys.join(', ')}`;
  return isJsonObject(root[keys[0]]) ? undefined : `${keys[0]} is not an object`;
}

const rootKeys = partCheck(
  {
    id: 'acmp-a2a-root-keys',
    binding: 'acmp-a2a',
    title: 'An ACMP data part root is {acmp_method, params}, or {acmp_result} / {acmp_error} alone',
    spec: 'seed 000 §1 (line 44)',
  },
  (p) => rootProblem(p.root),
);

/** The task id an ACMP payload names (params, result, or error data). */
function payloadTaskId(root: Json): string | undefined {
  const holder = [
    root.params,
    root.acmp_result,
    isJsonObject(root.acmp_error) ? root.acmp_error.data : undefined,
  ];
  for (const h of holder) if (isJsonObject(h) && typeof h.task_id === 'string') return h.task_id;
  return undefined;
}

const taskIdAgrees = partCheck(
  {
    id: 'acmp-a2a-task-id',
    binding: 'acmp-a2a',
    title: 'task_id is carried in Message.task_id and in the payload, and the two agree (and match the task)',
    spec: 'seed 000 §1 (line 45)',
  },
  (p) => {
    const inPayload = payloadTaskId(p.root);
    if (inPayload === undefined) return undefined;
    const onMessage = p.message.message.taskId ?? p.message.message.task_id;
    const inTask = p.message.enclosingTaskId !== undefined;
    if (onMessage === undefined)
      return inTask ? `${p.message.where} message in task ${inPayload} has no Message.task_id` : undefined;
    if (onMessage !== inPayload)
      return `Message.task_id ${brief(onMessage)} but payload task_id ${inPayload}`;
    if (inTask && p.message.enclosingTaskId !== inPayload)
      return `payload task_id ${inPayload} inside task ${p.message.enclosingTaskId}`;
    return undefined;
  },
);

/** Names of ACMP fields (Layer 1 §3) that must stay in the payload. */
const ACMP_FIELDS = new Set([
  'acmp_method',
  'acmp_result',
  'acmp_error',
  'task_id',
  'capability',
  'input',
  'max_price_cu',
  'escrow_id',
  'proof_method',
  'output',
  'cost_cu',
  'tokens_used',
  'proof',
  'seq',
  'chunk',
  'timeout_ms',
  'stream',
]);

/** ACMP field names in a metadata object: its keys and those one object below (`metadata.acmp.task_id`). */
function hoisted(value: unknown, depth = 0): string[] {
  if (!isJsonObject(value) || depth > 1) return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(ACMP_FIELDS.has(k) ? [k] : []),
    ...hoisted(v, depth + 1),
  ]);
}

const nothingHoisted: WireCheck = {
  id: 'acmp-a2a-no-metadata',
  binding: 'acmp-a2a',
  title: 'No ACMP field is hoisted into Message.metadata (or the task metadata)',
  spec: 'seed 000 §1 (line 46), §3.1 (line 85)',
  run: async (ctx, t) => {
    const seen = await judged(ctx, t);
    if (typeof seen === 'string') return skip(seen);
    const found = acmpParts(seen.exchanges).flatMap((p) =>
      hoisted(p.message.message.metadata).map((k) => `${p.message.where} Message.metadata.${k}`),
    );
    for (const exchange of seen.exchanges)
      for (const frame of exchange.frames) {
        const result = isJsonObject(frame.body.result) ? frame.body.result : {};
        for (const key of ['task', 'statusUpdate'])
          if (isJsonObject(result[key]))
            found.push(...hoisted((result[key] as Json).metadata).map((k) => `${key}.metadata.${k}`));
      }
    return found.length ? fail([...new Set(found)].slice(0, 5).join(', ')) : pass();
  },
};

/** The envelope checks, in report order. */
export const envelopeChecks: readonly Check[] = [mediaType, rootKeys, taskIdAgrees, nothingHoisted].flatMap(
  perTransport,
);
