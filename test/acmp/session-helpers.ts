import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE, SESSION_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import type { AcmpCapability } from '../../src/acmp/provider/provider-types.js';
import { acmpModule, type SessionModuleOptions } from '../../src/server/modules/acmp.js';
import type { Clock } from '../../src/shared/clock.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { postJson, startTestHost } from '../helpers/host.js';
import { countingCapability, jsonRpcUrl, newTaskId, rpc, V1 } from './helpers.js';

/** Helpers of the session-mode tests (docs/acmp-negotiation.md "Session mode"): hosts, raw calls, builders. */

export const TOKENS = ['a=agent-a-secret-0123456789', 'b=agent-b-secret-0123456789'];
export const A = 'agent-a-secret-0123456789';
export const B = 'agent-b-secret-0123456789';
export const SESSION = SESSION_EXTENSION_URI;

/** A clock the test moves; it runs with real time in between, so timers still fire. */
export function manualClock(): ManualClock {
  return new ManualClock(Date.now());
}

/** Headers of a session-mode call as `secret` (both extensions activated, A2A §3.2.6). */
export function sessionHeaders(
  secret: string,
  extensions = `${ACMP_EXTENSION_URI}, ${SESSION}`,
): Record<string, string> {
  return { ...V1, 'A2A-Extensions': extensions, authorization: `Bearer ${secret}` };
}

export interface SessionHostOptions {
  clock?: Clock;
  db?: string;
  dataDir?: string;
  migrate?: boolean;
  sessions?: SessionModuleOptions;
  capabilities?: AcmpCapability[];
}

/** A host serving ACMP with flat and session negotiation (tokens for agents a and b). */
export async function sessionHost(options: SessionHostOptions = {}) {
  const counter = countingCapability('count-runs', 5);
  const sessions: SessionModuleOptions = {
    maxRounds: 3,
    sessionTtlMs: 60_000,
    maxOpenSessions: 4,
    sweepMs: 50,
    fallbackReadMs: 100,
    ...options.sessions,
  };
  const modules = [
    acmpModule({
      capabilities: options.capabilities ?? [counter],
      heartbeatIntervalMs: 500,
      negotiation: {
        offerValidMs: { default: 5_000, min: 50, max: 60_000 },
        invokeWindowMs: 60_000,
        sessions,
      },
    }),
  ];
  const flags = { token: TOKENS, ...(options.db ? { db: options.db } : {}) };
  const host = await startTestHost({
    flags,
    modules,
    migrate: options.migrate ?? true,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  return { host, counter };
}

/** A message on the wire, as the tests read it. */
export interface WireMessage {
  messageId: string;
  taskId?: string;
  contextId?: string;
  parts: { data?: Record<string, unknown>; mediaType?: string }[];
  metadata?: Record<string, Record<string, unknown>>;
  extensions?: string[];
}

/** A task on the wire, as the tests read it. */
export interface WireTask {
  id: string;
  contextId: string;
  status: { state: string; message?: WireMessage; timestamp?: string };
  history?: WireMessage[];
  metadata?: Record<string, Record<string, unknown>>;
}

/** A JSON-RPC response as the tests read it. */
export interface Rpc {
  result?: { task?: WireTask; message?: WireMessage; tasks?: WireTask[] } & Partial<WireTask>;
  error?: { code: number; message: string; data?: unknown };
}

/** An offer as the tests read it. */
export interface WireOffer {
  offer_id: string;
  price_cu: number;
  valid_until_ms: number;
  capability: string;
  proof_method?: string;
}

/** One JSON-RPC call. */
export async function call(
  host: { url: string },
  method: string,
  params: unknown,
  headers: Record<string, string>,
): Promise<Rpc> {
  return (await postJson(jsonRpcUrl(host), rpc(method, params), headers)).body as Rpc;
}

/** A user message carrying one ACMP request (override any message field). */
export function acmpRequest(
  method: string,
  params: Record<string, unknown>,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    messageId: `m-${crypto.randomUUID()}`,
    role: 'ROLE_USER',
    parts: [{ mediaType: ACMP_MEDIA_TYPE, data: { acmp_method: method, params } }],
    ...fields,
  };
}

/** SendMessage of one ACMP request. */
export function send(host: { url: string }, message: Record<string, unknown>, secret = A): Promise<Rpc> {
  return call(host, 'SendMessage', { message }, sessionHeaders(secret));
}

/** The task of a SendMessage result. */
export function taskOf(reply: Rpc): WireTask {
  const task = reply.result?.task;
  if (!task) throw new Error(`expected a task, got ${JSON.stringify(reply)}`);
  return task;
}

/** The ACMP root of a refusal message or a task's status message. */
export function rootOf(reply: Rpc | WireTask): Record<string, unknown> | undefined {
  const message =
    'status' in reply
      ? reply.status.message
      : (reply.result?.message ?? reply.result?.task?.status.message ?? reply.result?.status?.message);
  return message?.parts[0]?.data;
}

/** The `acmp_error` of a refusal (or of a task's status message). */
export function errorOf(reply: Rpc | WireTask): { code: number; data?: Record<string, unknown> } | undefined {
  return rootOf(reply)?.acmp_error as { code: number; data?: Record<string, unknown> } | undefined;
}

/** Our extension's metadata on the task's status message. */
export function sessionMeta(task: WireTask): Record<string, unknown> {
  return task.status.message?.metadata?.[SESSION] ?? {};
}

/** Opens a session: returns the task (INPUT_REQUIRED, offer standing). */
export async function openSession(
  host: { url: string },
  params: Record<string, unknown> = {},
  secret = A,
): Promise<WireTask> {
  return taskOf(
    await send(host, acmpRequest('acmp/offerRequest', { capability: 'count-runs', ...params }), secret),
  );
}

/** The standing offer of a session task. */
export function offerOf(task: WireTask): WireOffer {
  return rootOf(task)!.acmp_result as WireOffer;
}

/** A message on the session task (same taskId and contextId). */
export function onTask(
  task: WireTask,
  method: string,
  params: Record<string, unknown>,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return acmpRequest(method, params, { taskId: task.id, contextId: task.contextId, ...fields });
}

/** GetTask of a session as `secret`. */
export async function getTask(host: { url: string }, id: string, secret = A): Promise<Rpc> {
  return call(host, 'GetTask', { id }, sessionHeaders(secret));
}

/** SubscribeToTask over raw JSON-RPC + SSE: every `result` of the stream, in order. */
export async function* subscribe(
  host: { url: string },
  id: string,
  secret = A,
): AsyncGenerator<Record<string, unknown>> {
  const res = await fetch(jsonRpcUrl(host), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...sessionHeaders(secret) },
    body: JSON.stringify(rpc('SubscribeToTask', { id })),
  });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of res.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('');
      buffer = buffer.slice(end + 2);
      if (data) yield (JSON.parse(data) as { result: Record<string, unknown> }).result;
    }
  }
}

/** An `acmp/invoke` of count-runs naming `references` (A2A `referenceTaskIds`), in `contextId`. */
export function invokeOn(
  references: string[],
  params: Record<string, unknown> = {},
  contextId?: string,
): Record<string, unknown> {
  const taskId = newTaskId();
  const invoke = {
    task_id: taskId,
    capability: 'count-runs',
    input: { type: 'text', data: 'x' },
    max_price_cu: 0.01,
    ...params,
  };
  return acmpRequest('acmp/invoke', invoke, {
    taskId,
    referenceTaskIds: references,
    ...(contextId ? { contextId } : {}),
  });
}
