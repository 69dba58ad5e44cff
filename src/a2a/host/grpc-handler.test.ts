import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { TaskNotFoundError } from '@a2a-js/sdk/errors';
import { GRPC_STATUS_CODE } from '@a2a-js/sdk/errors/grpc';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { forGrpc } from './grpc-handler.js';

/** A handler whose stream yields once and then waits until it is told to return. */
function handler(failWith?: unknown): { inner: A2ARequestHandler; returned: () => boolean } {
  let returned = false;
  const inner = {
    async *sendMessageStream() {
      try {
        yield { payload: undefined };
        await new Promise(() => {});
      } finally {
        returned = true;
      }
    },
    getTask: () => Promise.reject(failWith),
  } as unknown as A2ARequestHandler;
  return { inner, returned: () => returned };
}

const context = (signal?: AbortSignal) =>
  ({ user: { isAuthenticated: false, userName: 'anonymous', signal } }) as unknown as ServerCallContext;

describe('forGrpc (the handler as the gRPC services see it)', () => {
  it('ends a stream as soon as its call is cancelled, without waiting for the source', async () => {
    const { inner } = handler();
    const controller = new AbortController();
    const stream = forGrpc(inner).sendMessageStream({} as never, context(controller.signal));
    expect((await stream.next()).done).toBe(false);
    const pending = stream.next();
    controller.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('holds no event of a stream it has passed on while the call stays open', async () => {
    // A full GC from inside the test (the flag exposes `gc` to contexts made after it is set).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const sent: WeakRef<object>[] = [];
    const inner = {
      async *sendMessageStream() {
        for (let i = 0; i < 200; i++) {
          const event = { payload: { n: i, text: 'x'.repeat(100) } };
          sent.push(new WeakRef(event));
          yield event;
        }
        await new Promise(() => {});
      },
    } as unknown as A2ARequestHandler;
    const controller = new AbortController();
    const stream = forGrpc(inner).sendMessageStream({} as never, context(controller.signal));
    for (let i = 0; i < 200; i++) expect((await stream.next()).done).toBe(false);
    const pending = stream.next();
    // WeakRef targets stay alive to the end of the job that made them: let it end, then collect.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(sent.filter((ref) => ref.deref() !== undefined).length).toBeLessThan(5);
    controller.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('passes A2A errors and turns anything else into INTERNAL "Internal error"', async () => {
    await expect(
      forGrpc(handler(new TaskNotFoundError()).inner).getTask({} as never, context()),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(
      forGrpc(handler(new Error('secret')).inner).getTask({} as never, context()),
    ).rejects.toMatchObject({
      message: 'Internal error',
      status: GRPC_STATUS_CODE.INTERNAL,
    });
  });
});
