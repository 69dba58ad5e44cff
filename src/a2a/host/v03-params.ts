import { z } from 'zod';
import { checkWireId, type WireIdKind } from './wire-limits.js';

/**
 * The params of v0.3 JSON-RPC methods, as far as the SDK's compat translator reads them (A2A v0.3 §7).
 * The translator casts rather than checks: `tasks/cancel` with `"id": [1,2]` would reach the task store,
 * a part without `file` or a push config without `pushNotificationConfig` would throw a TypeError whose
 * text reached the wire. Unknown members stay allowed; the translator itself still refuses what it knows
 * (a missing `messageId`, an unknown part kind) with its own -32602.
 */

const id = (kind: WireIdKind) =>
  z.string().superRefine((value, ctx) => {
    const problem = checkWireId(kind, value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const metadata = z.record(z.string(), z.unknown()).optional();

const FileSchema = z.looseObject({
  bytes: z.string().optional(),
  uri: z.string().optional(),
  mimeType: z.string().optional(),
  name: z.string().optional(),
});

const PartSchema = z.union([
  z.looseObject({ kind: z.literal('text'), text: z.string(), metadata }),
  z.looseObject({ kind: z.literal('file'), file: FileSchema, metadata }),
  z.looseObject({ kind: z.literal('data'), data: z.unknown(), metadata }),
  // Another kind, or none: the translator refuses it with its own -32602.
  z.looseObject({ kind: z.unknown().refine((k) => k !== 'text' && k !== 'file' && k !== 'data') }),
]);

const MessageSchema = z.looseObject({
  messageId: id('messageId').optional(),
  contextId: id('contextId').optional(),
  taskId: id('taskId').optional(),
  parts: z.array(PartSchema).optional(),
  metadata,
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(id('taskId')).optional(),
});

const PushConfigSchema = z.looseObject({
  id: id('configId').optional(),
  url: z.string(),
  token: z.string().optional(),
  authentication: z
    .looseObject({ schemes: z.array(z.string()).optional(), credentials: z.string().optional() })
    .optional(),
});

const SendParamsSchema = z.looseObject({
  message: MessageSchema,
  configuration: z
    .looseObject({
      acceptedOutputModes: z.array(z.string()).optional(),
      pushNotificationConfig: PushConfigSchema.optional(),
      historyLength: z.int().min(0).optional(),
      blocking: z.boolean().optional(),
    })
    .optional(),
  metadata,
});

/** A task id that is looked up: one no store could hold is TaskNotFound, from the request handler. */
const TaskIdParamsSchema = z.looseObject({ id: z.string(), metadata });

/** Params schema of each v0.3 method (`agent/getAuthenticatedExtendedCard` takes none). */
const V03_PARAMS: Readonly<Record<string, z.ZodType>> = {
  'message/send': SendParamsSchema,
  'message/stream': SendParamsSchema,
  'tasks/get': TaskIdParamsSchema.extend({ historyLength: z.int().min(0).optional() }),
  'tasks/cancel': TaskIdParamsSchema,
  'tasks/resubscribe': TaskIdParamsSchema,
  'tasks/pushNotificationConfig/set': z.looseObject({
    taskId: z.string(),
    pushNotificationConfig: PushConfigSchema,
  }),
  'tasks/pushNotificationConfig/get': TaskIdParamsSchema.extend({
    pushNotificationConfigId: z.string().optional(),
  }),
  'tasks/pushNotificationConfig/list': TaskIdParamsSchema,
  'tasks/pushNotificationConfig/delete': TaskIdParamsSchema.extend({
    pushNotificationConfigId: z.string(),
  }),
};

/**
 * Checks v0.3 params; returns the JSON path of the first offending field ('params' for the object
 * itself), or undefined. Unknown methods pass (the SDK answers -32601).
 */
export function checkV03Params(method: string, params: unknown): string | undefined {
  const schema = Object.hasOwn(V03_PARAMS, method) ? V03_PARAMS[method] : undefined;
  if (schema === undefined) return undefined;
  const result = schema.safeParse(params ?? {});
  if (result.success) return undefined;
  const path = result.error.issues[0]?.path ?? [];
  return ['params', ...path.map(String)].join('.');
}
