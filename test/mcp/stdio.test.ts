import { afterEach, describe, expect, it } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { ACMP_MCP_EXTENSION_ID } from '../../src/mcp/acmp-extension.js';
import { connectMcpAcmpBuyer } from '../../src/mcp/buyer.js';
import { cleanup, onCleanup, tempDir } from '../helpers/host.js';
import {
  acmpHost,
  ALICE,
  ERAS,
  invoke,
  newTaskId,
  notified,
  rpcError,
  sentiment,
  slowCount,
  stdioClient,
  stdioCommand,
  TOKEN_FLAGS,
} from './helpers.js';

afterEach(cleanup);

const TOKENS_ENV = { A2AC_TOKENS: TOKEN_FLAGS.token.join(',') };

describe.each(ERAS)('a2a-commerce mcp-stdio: ACMP over MCP stdio in a real child process (%s)', (era) => {
  it('advertises the extension and sells a capability', async () => {
    const { client } = await stdioClient(era, ['--db', 'memory']);
    expect(client.getServerCapabilities()?.extensions?.[ACMP_MCP_EXTENSION_ID]).toMatchObject({
      role: 'provider',
      features: { input_streaming: false },
    });
    expect((await invoke(client, sentiment({ proof_method: 'result-hash' }))).proof).toMatchObject({
      method: 'result-hash',
    });
  });

  it('streams chunks in order on the request, then the result', async () => {
    const rec = await stdioClient(era, ['--db', 'memory']);
    const result = await invoke(rec.client, {
      task_id: newTaskId(),
      capability: 'summarize',
      input: { type: 'text', data: 'One. Two two. Three three three.' },
      stream: true,
    });
    const seqs = rec.notifications.filter((n) => n.method === 'acmp/streamChunk').map((n) => n.params.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i));
    expect(result.output_streamed).toBe(true);
  });

  it('cancels the task on notifications/cancelled (the stdio cancellation rule): a retry replays -33004', async () => {
    const rec = await stdioClient(era, ['--db', 'memory']);
    const params = slowCount(10_000);
    const abort = new AbortController();
    const call = invoke(rec.client, params, { signal: abort.signal }).catch((error: unknown) => error);
    await notified(rec, (n) => n.method === 'acmp/heartbeat');
    abort.abort('buyer gave up');
    await call;
    // Whether the retry lands before the cancel (it joins the task) or after (it replays), it ends -33004.
    expect((await rpcError(invoke(rec.client, params))).code).toBe(-33004);
  });
});

describe('mcp-stdio authentication (Layer 1 §5.1: over stdio the token is in the environment)', () => {
  it('serves the caller whose A2AC_TOKEN the host accepts', async () => {
    const { client } = await stdioClient('modern', ['--db', 'memory'], { ...TOKENS_ENV, A2AC_TOKEN: ALICE });
    expect((await invoke(client, sentiment())).output).toBeDefined();
  });

  it.each([
    ['without A2AC_TOKEN', {}],
    ['with a wrong A2AC_TOKEN', { A2AC_TOKEN: 'wrong-token-0123456789' }],
  ])('refuses to serve %s when the host has tokens', async (_, env) => {
    await expect(stdioClient('modern', ['--db', 'memory'], { ...TOKENS_ENV, ...env })).rejects.toThrow();
  });
});

describe('mcp-stdio shares the host store', () => {
  it('replays over A2A, on a host on the same data directory, a task the same agent bought over stdio', async () => {
    const dataDir = tempDir();
    const taskId = newTaskId();
    const input = {
      task_id: taskId,
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'Margins improved.' },
      max_price_cu: 0.005,
      proof_method: 'result-hash',
    };
    const stdio = await connectMcpAcmpBuyer({
      endpoint: { ...stdioCommand(['--data-dir', dataDir]), env: TOKENS_ENV },
      token: ALICE,
    });
    onCleanup(() => stdio.close());
    const overStdio = await stdio.invoke(input);
    await stdio.close();
    const host = await acmpHost({ dataDir, flags: TOKEN_FLAGS });
    const overA2a = await (await createAcmpBuyer({ agentUrl: host.url, token: ALICE })).invoke(input);
    expect(overA2a.proof).toEqual(overStdio.proof);
  });
});
