import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { Logger, LogFields } from '../../shared/logger.js';
import { observedHandler, routeSdkConsole, sdkScope } from './sdk-scope.js';

const closers: (() => void)[] = [];
afterEach(() => {
  while (closers.length > 0) closers.pop()!();
});

function recordingLogger(): {
  logger: Logger;
  lines: { level: string; event: string; fields: LogFields | undefined }[];
} {
  const lines: { level: string; event: string; fields: LogFields | undefined }[] = [];
  const at = (level: string) => (event: string, fields?: LogFields) =>
    void lines.push({ level, event, fields });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

/** A fake SDK transport: optionally calls the handler, then answers as the SDK does for an internal error. */
async function serve(
  shape: 'jsonrpc' | 'rest',
  reply: { status: number; body: unknown },
  callHandler: boolean,
): Promise<{ status: number; body: unknown }> {
  const handler = observedHandler({
    getTask: () => Promise.resolve(undefined),
  } as unknown as A2ARequestHandler);
  const app = express();
  app.use(sdkScope(recordingLogger().logger, shape), async (_req, res) => {
    if (callHandler) await handler.getTask({ tenant: '', id: 't' }, undefined as never);
    res.status(reply.status).json(reply.body);
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { status: res.status, body: await res.json() };
}

const leaked = "Cannot read properties of null (reading 'text')";

describe('guarding the SDK replies', () => {
  it("answers an SDK failure before the handler ran as the client's (-32602), without its text", async () => {
    const res = await serve(
      'jsonrpc',
      { status: 200, body: { jsonrpc: '2.0', id: 7, error: { code: -32603, message: leaked } } },
      false,
    );
    expect(res.body).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(JSON.stringify(res.body)).not.toContain('Cannot read');
  });

  it('keeps an internal error after the handler ran internal, with a generic message', async () => {
    const res = await serve(
      'jsonrpc',
      { status: 200, body: { jsonrpc: '2.0', id: 7, error: { code: -32603, message: leaked } } },
      true,
    );
    expect(res.body).toEqual({ jsonrpc: '2.0', id: 7, error: { code: -32603, message: 'Internal error' } });
  });

  it('does the same for google.rpc.Status and v0.3 REST error bodies', async () => {
    const status = { error: { code: 500, status: 'INTERNAL', message: leaked, details: [] } };
    expect(await serve('rest', { status: 500, body: status }, false)).toMatchObject({
      status: 400,
      body: { error: { code: 400, status: 'INVALID_ARGUMENT' } },
    });
    expect(await serve('rest', { status: 500, body: status }, true)).toMatchObject({
      status: 500,
      body: { error: { message: 'Internal error' } },
    });
    expect(
      await serve('rest', { status: 500, body: { code: -32603, message: leaked } }, false),
    ).toMatchObject({ status: 400, body: { code: -32602 } });
  });

  it('leaves coded errors alone', async () => {
    const body = { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task not found' } };
    expect((await serve('jsonrpc', { status: 200, body }, false)).body).toEqual(body);
  });
});

describe('routing the SDK console', () => {
  it('sends lines written inside a request scope to the logger as a kind, class and code', async () => {
    const target = { error: vi.fn(), warn: vi.fn() };
    routeSdkConsole(target);
    const { logger, lines } = recordingLogger();
    const app = express();
    app.use(sdkScope(logger, 'jsonrpc'), (_req, res) => {
      target.error(
        'Pre-stream error for request secret-id:',
        new TaskNotFoundError('Task not found: secret-id'),
      );
      target.warn('Tenant mismatch: URL path tenant "a" differs');
      res.json({});
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    closers.push(() => server.close());
    await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(lines).toEqual([
      {
        level: 'info',
        event: 'a2a.sdk_diagnostic',
        fields: { kind: 'pre_stream_error', error_name: 'TaskNotFoundError', error_code: undefined },
      },
      { level: 'warn', event: 'a2a.sdk_diagnostic', fields: { kind: 'tenant_mismatch' } },
    ]);
    expect(JSON.stringify(lines)).not.toContain('secret-id');
  });

  it('passes lines written outside a request through, and installs once', () => {
    const error = vi.fn();
    const target = { error, warn: vi.fn() };
    routeSdkConsole(target);
    routeSdkConsole(target);
    target.error('outside');
    expect(error).toHaveBeenCalledTimes(1);
    expect(error).toHaveBeenCalledWith('outside');
  });
});
