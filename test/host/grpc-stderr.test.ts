import { afterEach, describe, expect, it } from 'vitest';
import { startServeProcess } from '../helpers/cli-process.js';
import { cleanup, tempDir } from '../helpers/cleanup.js';
import { overGrpc, type A2ARequest } from '../helpers/edge-bindings.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

/**
 * The SDK's diagnostics on gRPC go to the host's JSON logger, as on HTTP (docs/host.md "What the SDK
 * itself prints"): whatever a client sends over gRPC, a `serve` process writes JSON lines only to stderr
 * — no stack trace, no file path, no driver error.
 */

/** The gRPC target (`host:port`) the host's card lists. */
async function grpcTarget(url: string): Promise<string> {
  const res = await fetch(`${url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
  const card = (await res.json()) as { supportedInterfaces: { url: string; protocolBinding: string }[] };
  const grpc = card.supportedInterfaces.find((i) => i.protocolBinding === 'GRPC');
  if (!grpc) throw new Error('the card lists no gRPC interface');
  return grpc.url;
}

function message(fields: Record<string, unknown>): Record<string, unknown> {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }], ...fields };
}

/** Client input the SDK has something to say about, and input beyond the edge's limits. */
const BAD_INPUT: A2ARequest[] = [
  // The SDK warns "Reference task … not found" with the id.
  { method: 'SendMessage', message: message({ referenceTaskIds: ['no-such-task'] }) },
  { method: 'SendMessage', message: message({ contextId: 'c'.repeat(37) }) },
  { method: 'SendMessage', message: message({ contextId: 'c'.repeat(129) }) },
  { method: 'SendMessage', message: message({ contextId: 'ctx\nx' }) },
  { method: 'SendMessage', message: message({}), tenant: 't'.repeat(256) },
  { method: 'GetTask', id: 'x'.repeat(100_000) },
  { method: 'SubscribeToTask', id: 'no-such-task' },
  { method: 'CreatePushConfig', taskId: 'no-such-task', id: 'c'.repeat(40) },
];

const STORES = [
  { name: 'SQLite', db: () => Promise.resolve(undefined) },
  ...(process.env.TEST_PG_URL ? [{ name: 'PostgreSQL', db: freshPgDatabase }] : []),
];

describe.each(STORES)('stderr of a host receiving bad gRPC input ($name)', ({ db }) => {
  it('holds JSON lines only', async () => {
    const url = await db();
    const host = await startServeProcess([
      '--no-tls',
      '--no-personal-data',
      '--migrate',
      '--port',
      '0',
      '--grpc-port',
      '0',
      '--data-dir',
      tempDir(),
      ...(url ? ['--db', url] : []),
    ]);
    const target = await grpcTarget(host.url);
    for (const request of BAD_INPUT) await overGrpc(target, request);
    const run = await host.stop();
    const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
    const notJson = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    expect(run.stderr).not.toMatch(/no-such-task|\bat \/|node_modules|value too long/);
    expect(lines.some((line) => line.includes('a2a.sdk_diagnostic'))).toBe(true);
  }, 60_000);
});
