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
