import { createServer, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTracing } from '../../src/server/tracing.js';
import { acmpHost, jsonRpcUrl } from '../acmp/helpers.js';
import { cleanup, onCleanup } from '../helpers/host.js';

/*
 * The OTLP set-up end to end (docs/operations.md "Tracing"): the host's `startTracing` with an endpoint in
 * the environment exports its spans to a collector, flushed when tracing shuts down. The collector is a
 * loopback server that records what it is sent.
 */

afterEach(cleanup);

async function fakeCollector(): Promise<{ url: string; posts: { path: string; body: string }[] }> {
  const posts: { path: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, posts };
}

describe('OTLP export', () => {
  it('sends the host’s spans to the collector named by OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const collector = await fakeCollector();
    // The exporter reads the process environment, as the serve command's environment is.
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', collector.url);
    vi.stubEnv('OTEL_SERVICE_NAME', 'provider-test');
    onCleanup(() => {
      vi.unstubAllEnvs();
    });
    const tracing = startTracing(process.env);
    expect(tracing.enabled).toBe(true);
    const host = await acmpHost();
    await fetch(jsonRpcUrl(host), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'task_missing' } }),
    });
    await tracing.shutdown();
    const traces = collector.posts.filter((p) => p.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    const body = traces.map((p) => p.body).join('\n');
    expect(body).toContain('"GetTask"');
    expect(body).toContain('provider-test');
  });
});
