import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { LocalError } from '../shared/errors.js';
import { silentLogger, type Logger } from '../shared/logger.js';

/**
 * The OpenTelemetry SDK for the host (docs/operations.md "Tracing"): the only place the SDK packages are
 * imported. Everything else speaks to `@opentelemetry/api` (src/shared/tracing.ts), which stays a no-op
 * until {@link installTracing} registers a provider.
 */

/** The service name spans carry unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` name another. */
const SERVICE_NAME = 'a2a-commerce';

/** The running tracing set-up: flush and stop it when the host stops. */
export interface Tracing {
  /** Whether spans are recorded and exported. */
  readonly enabled: boolean;
  /** Exports what is buffered, then stops the provider (idempotent). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: () => Promise.resolve() };

/**
 * Whether the environment asks for traces. OFF unless configured: `OTEL_SDK_DISABLED=true` wins; then
 * `OTEL_TRACES_EXPORTER` decides (`otlp` on, `none` off — the only two exporters this host ships); unset,
 * an OTLP endpoint (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`) switches it on.
 * The OpenTelemetry default of `otlp` when nothing is set is deliberately not followed: a host started
 * without a collector must not try to reach one.
 * @throws LocalError `CONFIG_INVALID` for an exporter this host does not ship.
 */
export function tracingRequested(env: Record<string, string | undefined>): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  if (exporters.length > 0) {
    const unknown = exporters.find((e) => e !== 'otlp' && e !== 'none');
    if (unknown !== undefined)
      throw new LocalError(
        'CONFIG_INVALID',
        `OTEL_TRACES_EXPORTER: "${unknown.slice(0, 40)}" is not supported (use otlp or none)`,
      );
    return exporters.includes('otlp');
  }
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

/**
 * Starts tracing as the environment asks ({@link tracingRequested}): an OTLP/HTTP (JSON) exporter behind a
 * batch processor, both configured by the SDK from the standard variables (endpoint, headers, timeout,
 * `OTEL_BSP_*`, `OTEL_TRACES_SAMPLER`). Off, nothing is registered and the API stays a no-op.
 */
export function startTracing(
  env: Record<string, string | undefined>,
  logger: Logger = silentLogger,
): Tracing {
  if (!tracingRequested(env)) return OFF;
  const tracing = installTracing([new BatchSpanProcessor(new OTLPTraceExporter())], logger);
  logger.info('tracing.started', { exporter: 'otlp' });
  return tracing;
}

/**
 * Registers a tracer provider with these span processors as the process's global one, with the W3C
 * trace-context propagator and Node's async-context manager. Tests pass an in-memory exporter's
 * processor. One provider per process: the API's globals cannot be registered twice.
 */
export function installTracing(processors: SpanProcessor[], logger: Logger = silentLogger): Tracing {
  diag.setLogger(diagnostics(logger), DiagLogLevel.WARN);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  let stopped: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown: () => (stopped ??= provider.shutdown().catch(() => undefined)),
  };
}

/**
 * The SDK's own warnings (an export that failed, a bad variable) as host log records: the first words of
 * the SDK's text, which names collectors and settings, never request content.
 */
function diagnostics(logger: Logger): DiagLogger {
  const record =
    (level: 'warn' | 'error') =>
    (message: string): void =>
      logger[level]('tracing.diagnostic', { detail: message.slice(0, 160) });
  const ignore = (): void => undefined;
  return { error: record('error'), warn: record('warn'), info: ignore, debug: ignore, verbose: ignore };
}
