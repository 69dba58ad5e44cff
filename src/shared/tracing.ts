import {
  INVALID_SPAN_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { errorCode } from './errors.js';

/**
 * OpenTelemetry tracing through the API only (docs/operations.md "Tracing"). The host registers the SDK
 * (src/server/tracing.ts) when the `OTEL_*` variables ask for it; until then every call here goes to the
 * API's defaults — a no-op tracer, no context manager, no propagator — so a span costs one non-recording
 * object, and extraction and injection do nothing. Spans are made in three places only: the request edge
 * ({@link startServerSpan}), the ACMP execution core and the store commits ({@link inSpan}).
 */

/**
 * Span attribute names: the draft A2A semantic conventions (`a2a.*`, `gen_ai.conversation.id` for the
 * A2A contextId), MCP's `mcp.method.name`, and ours for the commerce layers. Values are ids, states and
 * codes — never payloads or personal data.
 */
export const TRACE_ATTR = {
  a2aMethod: 'a2a.method.name',
  a2aTaskId: 'a2a.task.id',
  a2aTaskState: 'a2a.task.state',
  a2aMessageId: 'a2a.message.id',
  conversationId: 'gen_ai.conversation.id',
  mcpMethod: 'mcp.method.name',
  acmpCapability: 'acmp.capability',
  acmpTaskId: 'acmp.task.id',
  acmpOutcome: 'acmp.outcome',
  acmpErrorCode: 'acmp.error.code',
  acpErrorCode: 'acp.error.code',
  errorType: 'error.type',
  dbSystem: 'db.system.name',
  dbOperation: 'db.operation.name',
  dbBatchSize: 'db.operation.batch.size',
} as const;

/** The instrumentation scope of every span this package makes. */
const SCOPE = 'a2a-commerce';

/** The tracer: a proxy that follows whatever provider is registered globally, now or later. */
const tracer = trace.getTracer(SCOPE);

/** Request headers as Node, Express and the A2A SDK's `ServerCallContext` hold them. */
export type HeaderRecord = Readonly<Record<string, string | string[] | undefined>>;

const headerGetter = {
  keys: (carrier: HeaderRecord): string[] => Object.keys(carrier),
  get: (carrier: HeaderRecord, key: string): string | string[] | undefined => carrier[key.toLowerCase()],
};

/**
 * Starts the SERVER span of one inbound call, its parent the W3C trace context (`traceparent`,
 * `tracestate`) the request headers carry (W3C Trace Context §3), or the active context when they carry
 * none. The caller ends it ({@link endSpan}); run the call under {@link withSpan}.
 */
export function startServerSpan(
  name: string,
  headers: HeaderRecord | undefined,
  attributes: Attributes,
): Span {
  const parent =
    headers === undefined ? context.active() : propagation.extract(context.active(), headers, headerGetter);
  return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
}

/**
 * Runs `fn` with `span` the active span, so that child spans and outbound calls descend from it. The
 * no-op tracer's span (tracing off, no parent) has nothing to pass on: `fn` is simply called.
 */
export function withSpan<T>(span: Span, fn: () => T): T {
  if (span.spanContext() === INVALID_SPAN_CONTEXT) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Options of {@link inSpan}. */
interface InSpanOptions {
  readonly attributes?: Attributes;
  /** The error attributes of a failure (its ACMP or ACP code), recorded with status ERROR. */
  readonly failure?: (error: unknown) => Attributes;
}

/**
 * Runs `fn` inside an INTERNAL child span of the active span: ended when `fn` settles, status ERROR
 * with the error's class (`error.type`) and `options.failure`'s codes when it throws — never the
 * error's message, which may carry request content.
 */
async function inSpan<T>(name: string, options: InSpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, { attributes: options.attributes });
  try {
    return await withSpan(span, () => fn(span));
  } catch (error) {
    failSpan(span, { ...options.failure?.(error), [TRACE_ATTR.errorType]: errorType(error) });
    throw error;
  } finally {
    span.end();
  }
}

/** Marks a span failed with the given codes (status ERROR, no description: messages stay out). */
export function failSpan(span: Span, attributes: Attributes): void {
  if (!span.isRecording()) return;
  span.setAttributes(attributes);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The `error.type` of an error: its code when it has a string or numeric one, else its class name. */
export function errorType(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = errorCode(error);
  return typeof code === 'string' || typeof code === 'number' ? String(code) : error.name;
}

/**
 * The trace-context headers of an outbound call made now (W3C `traceparent`, and `tracestate` when the
 * trace has one), or undefined when there is nothing to send: tracing off, or no active span.
 */
export function traceHeaders(): Record<string, string> | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent === undefined ? undefined : carrier;
}

/** The ids of the active span, for log records; undefined when none is recording. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * Marks the active span failed with a protocol code answered in a reply rather than thrown (an ACMP
 * refusal, an escrow or ACPspec error part): the call succeeded on the wire, the operation did not.
 */
export function failActiveSpan(attributes: Attributes): void {
  const span = trace.getActiveSpan();
  if (span !== undefined) failSpan(span, attributes);
}

/** Starts an INTERNAL child span of the active span; the caller ends it. */
export function startSpan(name: string, attributes: Attributes): Span {
  return tracer.startSpan(name, { attributes });
}

/**
 * Runs one store commit (a database write transaction, or one group-commit batch) inside a child span
 * `store.commit <operation>`: one span per commit, never per row.
 */
export function traceCommit<T>(
  commit: { operation: string; system: string; batchSize?: number },
  fn: () => Promise<T>,
): Promise<T> {
  const attributes: Attributes = {
    [TRACE_ATTR.dbOperation]: commit.operation,
    [TRACE_ATTR.dbSystem]: commit.system,
  };
  if (commit.batchSize !== undefined) attributes[TRACE_ATTR.dbBatchSize] = commit.batchSize;
  return inSpan(`store.commit ${commit.operation}`, { attributes }, fn);
}

/**
 * Runs `fn` in the trace context the headers carry (W3C `traceparent`, `tracestate`), for an inbound
 * call whose spans start further in (the MCP endpoint): none carried, or tracing off, `fn` runs as is.
 */
export function withRemoteContext<T>(headers: HeaderRecord, fn: () => T): T {
  return context.with(propagation.extract(context.active(), headers, headerGetter), fn);
}
