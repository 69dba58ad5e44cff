import { trace, type Span } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, vi } from 'vitest';
import { installTracing } from '../../src/server/tracing.js';
import { onCleanup } from './cleanup.js';

/**
 * Tracing for a test file (docs/operations.md "Tracing"): the host's own set-up (`installTracing`) with an
 * in-memory exporter behind a simple processor, so every span is readable once it ends. The API's
 * globals are per process, and vitest runs each file in its own: call once per file, at its top.
 */
export function installTestTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const tracing = installTracing([new SimpleSpanProcessor(exporter)]);
  afterAll(() => tracing.shutdown());
  return exporter;
}

/** Runs `fn` inside a root span the test makes (a buyer application's own span); returns it ended. */
export async function underRootSpan(fn: () => Promise<unknown>): Promise<Span> {
  return trace.getTracer('test').startActiveSpan('buyer-application', async (root) => {
    try {
      await fn();
    } finally {
      root.end();
    }
    return root;
  });
}

/** The one finished span named `name` in the trace, failing the test when there is none or several. */
export function onlySpan(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const named = spans.filter((s) => s.name === name);
  if (named.length !== 1) throw new Error(`expected one span "${name}", got ${named.length}`);
  return named[0]!;
}

/** The parent span id of a finished span (undefined for a root). */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** One outbound request seen by {@link recordOutboundHeaders}. */
export interface OutboundCall {
  readonly url: string;
  readonly traceparent: string | null;
}

/**
 * Records the URL and `traceparent` of every global `fetch` call from now to the end of the test (the spy
 * is removed by the shared cleanup). Filter the calls by URL to look at one peer.
 */
export function recordOutboundHeaders(): OutboundCall[] {
  const seen: OutboundCall[] = [];
  const original = globalThis.fetch;
  const spy = vi.spyOn(globalThis, 'fetch').mockImplementation((input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    seen.push({ url, traceparent: headers.get('traceparent') });
    return original(input, init);
  });
  onCleanup(() => spy.mockRestore());
  return seen;
}

/** The calls to URLs under `base`. */
export function callsTo(calls: readonly OutboundCall[], base: string): OutboundCall[] {
  return calls.filter((c) => c.url.startsWith(base));
}
