import { describe, expect, it } from 'vitest';
import { tracingRequested } from './tracing.js';

describe('tracingRequested: off unless the OTEL_* variables ask (docs/operations.md "Tracing")', () => {
  it.each([
    [{}, false],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, true],
    [{ OTEL_TRACES_EXPORTER: ' OTLP ' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none' }, false],
    [{ OTEL_TRACES_EXPORTER: 'none,otlp' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, false],
    [{ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }, true],
  ])('%j → %s', (env, on) => {
    expect(tracingRequested(env)).toBe(on);
  });

  it('refuses an exporter the host does not ship, naming the variable', () => {
    let thrown: unknown;
    try {
      tracingRequested({ OTEL_TRACES_EXPORTER: 'zipkin' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'CONFIG_INVALID' });
    expect((thrown as Error).message).toContain('OTEL_TRACES_EXPORTER');
  });
});
