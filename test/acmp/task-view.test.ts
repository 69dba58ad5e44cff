import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, postJson } from '../helpers/host.js';
import {
  ACTIVATED,
  acmpHost,
  acmpMessage,
  invokeRoot,
  jsonRpcUrl,
  rpc,
  sendRaw,
  type RpcBody,
} from './helpers.js';

afterEach(cleanup);

const TOKENS = ['a=agent-a-secret-0123456789', 'b=agent-b-secret-0123456789'];
const as = (secret: string): Record<string, string> => ({ ...ACTIVATED, authorization: `Bearer ${secret}` });
const A = as('agent-a-secret-0123456789');
const B = as('agent-b-secret-0123456789');

async function call(
  host: { url: string },
  method: string,
  params: unknown,
  headers = A,
): Promise<
  RpcBody & {
    result?: {
      tasks?: { id: string; status: { state: string } }[];
      nextPageToken?: string;
      totalSize?: number;
    };
  }
> {
  return (await postJson(jsonRpcUrl(host), rpc(method, params), headers)).body as RpcBody;
}

describe('the A2A Task of an ACMP invoke is a view of its record (docs/acmp-a2a-binding.md §4)', () => {
  it('refuses a plain A2A message to an ACMP task id (-32004) and leaves the record untouched', async () => {
    const host = await acmpHost({ flags: { token: TOKENS } });
    const root = invokeRoot({
      capability: 'slow-count',
      input: { type: 'json', data: { n: 5 } },
      max_price_cu: 1,
    });
    await sendRaw(host, acmpMessage(root), A);
    const plain = {
      messageId: 'm-plain-1',
      role: 'ROLE_USER',
      taskId: root.params.task_id,
      parts: [{ text: 'hello' }],
    };
    expect((await call(host, 'SendMessage', { message: plain })).error?.code).toBe(-32004);
    const task = (await call(host, 'GetTask', { id: root.params.task_id })).result;
    expect(task?.status?.state).toBe('TASK_STATE_COMPLETED');
    expect(task?.history).toHaveLength(2);
  });

  it("lists the caller's ACMP tasks newest first, paged with the SDK's page tokens, filtered by state; other callers see none", async () => {
    const host = await acmpHost({ flags: { token: TOKENS } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const root = invokeRoot({ input: { type: 'text', data: `n${i}` }, max_price_cu: 1 });
      ids.push(root.params.task_id as string);
      await sendRaw(host, acmpMessage(root), A);
    }
    const seen: string[] = [];
    let pageToken = '';
    for (let page = 0; page < 5; page++) {
      const listed = (await call(host, 'ListTasks', { pageSize: 2, ...(pageToken ? { pageToken } : {}) }))
        .result;
      expect(listed?.totalSize).toBe(5);
      seen.push(...(listed?.tasks ?? []).map((t) => t.id));
      pageToken = listed?.nextPageToken ?? '';
      if (!pageToken) break;
    }
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(5);
    expect((await call(host, 'ListTasks', { status: 'TASK_STATE_COMPLETED' })).result?.tasks).toHaveLength(5);
    expect((await call(host, 'ListTasks', { status: 'TASK_STATE_CANCELED' })).result?.tasks).toHaveLength(0);
    expect((await call(host, 'ListTasks', {}, B)).result?.tasks).toHaveLength(0);
    expect((await call(host, 'GetTask', { id: ids[0] }, B)).error?.code).toBe(-32001);
  });
});
