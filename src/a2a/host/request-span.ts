import { taskStateToJSON, type Message, type StreamResponse, type Task, type TaskState } from '@a2a-js/sdk';
import { A2AError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { Attributes, Span } from '@opentelemetry/api';
import { isJsonObject } from '../../shared/json.js';
import {
  TRACE_ATTR,
  errorType,
  failSpan,
  startServerSpan,
  withSpan,
  type HeaderRecord,
} from '../../shared/tracing.js';

/**
 * The SERVER span of one A2A call (docs/operations.md "Tracing"), whatever the transport (JSON-RPC,
 * HTTP+JSON, gRPC all reach the host's one request handler): named after the A2A method, its parent the
 * trace context of the request's headers (the SDK keeps them in the call context's state, under
 * `headers`, for HTTP and gRPC alike), with the draft A2A semantic-convention attributes known from the
 * request and, once answered, from the task. Ids and states only — never parts, metadata or payloads.
 */

/** The key the SDK's default call-context builder stores the request headers under. */
const HEADERS_KEY = 'headers';

/** Methods whose request `id` is a task id (A2A §9: GetTask, CancelTask, SubscribeToTask). */
const TASK_ID_METHODS = new Set(['GetTask', 'CancelTask', 'SubscribeToTask']);

/** Starts the span of `method` for a call with these params and context. */
export function startRequestSpan(method: string, params: object, context: ServerCallContext): Span {
  const headers = context.state.get(HEADERS_KEY) as HeaderRecord | undefined;
  const span = startServerSpan(method, headers, { [TRACE_ATTR.a2aMethod]: method });
  if (span.isRecording()) span.setAttributes(requestAttributes(method, params));
  return span;
}

/** Runs a unary call inside its span: the answer's task attributes, or the failure's code, then ends it. */
export async function traceCall<T>(span: Span, call: () => Promise<T>): Promise<T> {
  try {
    const result = await withSpan(span, call);
    if (span.isRecording()) span.setAttributes(answerAttributes(result));
    return result;
  } catch (error) {
    failSpan(span, failureAttributes(error));
    throw error;
  } finally {
    span.end();
  }
}

/** A stream inside its span: each event's task attributes (the last state wins); ended with the stream. */
export async function* traceStream(
  span: Span,
  source: AsyncGenerator<StreamResponse, void, undefined>,
): AsyncGenerator<StreamResponse, void, undefined> {
  try {
    for (;;) {
      const next = await withSpan(span, () => source.next());
      if (next.done === true) return;
      if (span.isRecording()) span.setAttributes(answerAttributes(next.value.payload?.value));
      yield next.value;
    }
  } catch (error) {
    failSpan(span, failureAttributes(error));
    throw error;
  } finally {
    // A consumer that leaves early ends the source too (its cleanup runs in its finally).
    await source.return(undefined);
    span.end();
  }
}

/** Ends a span whose call was refused before it started (a stream refused before its first event). */
export function endRefused(span: Span, error: unknown): void {
  failSpan(span, failureAttributes(error));
  span.end();
}

/** What the request names: the message's ids and context, or the task id. */
function requestAttributes(method: string, params: object): Attributes {
  const fields = params as Record<string, unknown>;
  const attributes: Attributes = {};
  if (TASK_ID_METHODS.has(method) && typeof fields.id === 'string')
    attributes[TRACE_ATTR.a2aTaskId] = fields.id;
  if (typeof fields.taskId === 'string' && fields.taskId !== '')
    attributes[TRACE_ATTR.a2aTaskId] = fields.taskId;
  const message = fields.message;
  if (isJsonObject(message)) {
    setString(attributes, TRACE_ATTR.a2aMessageId, message.messageId);
    setString(attributes, TRACE_ATTR.a2aTaskId, message.taskId);
    setString(attributes, TRACE_ATTR.conversationId, message.contextId);
  }
  return attributes;
}

/** What an answer (a Task, a Message or a stream event) tells of the task. */
function answerAttributes(answer: unknown): Attributes {
  if (typeof answer !== 'object' || answer === null) return {};
  const value = answer as Partial<Task & Message & { status: Task['status'] }>;
  const attributes: Attributes = {};
  setString(
    attributes,
    TRACE_ATTR.a2aTaskId,
    'status' in value || 'history' in value ? value.id : value.taskId,
  );
  setString(attributes, TRACE_ATTR.conversationId, value.contextId);
  const state = value.status?.state;
  if (state !== undefined) attributes[TRACE_ATTR.a2aTaskState] = stateName(state);
  return attributes;
}

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`: the A2A state names the draft conventions use. */
function stateName(state: TaskState): string {
  return taskStateToJSON(state)
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

function failureAttributes(error: unknown): Attributes {
  return { [TRACE_ATTR.errorType]: error instanceof A2AError ? error.reason : errorType(error) };
}

function setString(attributes: Attributes, key: string, value: unknown): void {
  if (typeof value === 'string' && value !== '') attributes[key] = value;
}
