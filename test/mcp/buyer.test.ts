import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { agentEndpoints, createAcmpBuyer } from '../../src/connect/acmp-buyer.js';
import { isLocalError } from '../../src/shared/errors.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, onCleanup, startTestHost, tempDir } from '../helpers/host.js';
import { acmpHost, ALICE, ERAS, mcpUrl, newTaskId, TOKEN_FLAGS } from './helpers.js';

afterEach(cleanup);

// The buyers only talk to the host (fresh task ids, their own connections), so the tests of a plain host
// share one per file; the host without ACMP and the host restarted on its data directory are the tests' own.
const plainHost = shared(() => acmpHost());

const SENTIMENT = {
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Revenue grew 12% YoY.' },
  max_price_cu: 0.005,
  proof_method: 'result-hash',
};

async function picked(options: Parameters<typeof createAcmpBuyer>[0]): ReturnType<typeof createAcmpBuyer> {
  const buyer = await createAcmpBuyer(options);
  onCleanup(() => buyer.close());
  return buyer;
}

describe('createAcmpBuyer({ agentUrl, prefer }): the buyer picks the binding', () => {
  const tokenHost = shared(() => acmpHost({ flags: TOKEN_FLAGS }));

  it.each([
    [['mcp', 'a2a'], 'mcp'],
    [['a2a', 'mcp'], 'a2a'],
  ] as const)(
    'prefer %j picks %s, with the same capability object and the same result',
    async (prefer, binding) => {
      const host = plainHost();
      const buyer = await picked({ agentUrl: host.url, prefer });
      expect(buyer.binding).toBe(binding);
      expect(buyer.capabilityObject.features.input_streaming).toBe(false);
      const result = await buyer.invoke(SENTIMENT);
      expect(result.output).toMatchObject({ data: { sentiment: 'positive' } });
    },
  );

  it.each(['mcp', 'a2a'] as const)('cancels over %s with the same API', async (binding) => {
    const host = plainHost();
    const buyer = await picked({ agentUrl: host.url, prefer: [binding] });
    const taskId = newTaskId();
    const outcome = (async () => {
      try {
        for await (const event of buyer.stream({
          task_id: taskId,
          capability: 'slow-count',
          input: { type: 'json', data: { n: 10_000 } },
          max_price_cu: 2,
        })) {
          if (event.kind === 'heartbeat') await buyer.cancel(taskId, { reason: 'test' });
        }
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(await outcome).toMatchObject({ code: -33004 });
  });

  it('accepts the MCP endpoint itself as the agent URL', async () => {
    const host = plainHost();
    expect(agentEndpoints(`${host.url}/mcp/`)).toEqual({ base: host.url, mcp: mcpUrl(host) });
    expect((await picked({ agentUrl: mcpUrl(host), prefer: ['mcp'] })).binding).toBe('mcp');
  });

  it('falls back to the next binding when the preferred one is not offered', async () => {
    const host = plainHost();
    const buyer = await picked({
      agentUrl: host.url,
      prefer: ['mcp', 'a2a'],
      mcpUrl: `${host.url}/no-mcp-here`,
    });
    expect(buyer.binding).toBe('a2a');
  });

  it('fails with -33007 when no preferred binding offers ACMP', async () => {
    const host = await startTestHost({ modules: [] });
    await expect(createAcmpBuyer({ agentUrl: host.url, prefer: ['mcp', 'a2a'] })).rejects.toMatchObject({
      code: -33007,
      data: { tried: ['mcp', 'a2a'] },
    });
  });

  it.each(ERAS)('stops at a refusal instead of trying the other binding (MCP %s)', async (mcpEra) => {
    const host = tokenHost();
    const error = await createAcmpBuyer({
      agentUrl: host.url,
      prefer: ['mcp', 'a2a'],
      mcpEra,
      token: 'wrong-token-0123456789',
    }).catch((e: unknown) => e);
    expect(isLocalError(error, 'REFUSED')).toBe(true);
    expect((await picked({ agentUrl: host.url, prefer: ['mcp'], mcpEra, token: ALICE })).binding).toBe('mcp');
  });
});

describe('MCP buyer retries (Layer 1 §3.1.1)', () => {
  it('retries with the same task_id when the host stops mid-invoke, and gets the drained result from the restarted host', async () => {
    const dataDir = tempDir();
    // A liveness window (3 × 1 s) longer than a restart, so the buyer keeps retrying instead of giving up.
    const first = await acmpHost({ dataDir, heartbeatIntervalMs: 1000 });
    const port = new URL(first.url).port;
    const buyer = await picked({ agentUrl: first.url, prefer: ['mcp'], retries: 20, retryDelayMs: 50 });
    let restarted: Promise<unknown> | undefined;
    let result: unknown;
    for await (const event of buyer.stream({
      capability: 'slow-count',
      input: { type: 'json', data: { n: 40 } },
      max_price_cu: 2,
      timeout_ms: 20_000,
    })) {
      if (event.kind === 'heartbeat' && !restarted)
        restarted = first
          .close()
          .then(() => acmpHost({ dataDir, heartbeatIntervalMs: 1000, flags: { port } }));
      if (event.kind === 'result') result = event.output;
    }
    await restarted;
    expect(result).toEqual({ type: 'json', data: { count: 40 } });
  });
});

describe('a2a-commerce acmp --binding', () => {
  function capture(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
    const stdout: string[] = [];
    const stderr: string[] = [];
    return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdout, stderr };
  }

  it('buys over MCP with --binding mcp and verifies the proof', async () => {
    const host = plainHost();
    const io = capture();
    const code = await runCli(
      [
        'acmp',
        'invoke',
        host.url,
        '--binding',
        'mcp',
        '--capability',
        'sentiment-analysis',
        '--input',
        'Revenue grew.',
        '--max-price',
        '0.005',
        '--proof',
        'result-hash',
      ],
      io,
    );
    expect(code).toBe(0);
    expect(JSON.parse(io.stdout.join('\n'))).toMatchObject({ output: { data: { sentiment: 'positive' } } });
    expect(io.stderr.join('\n')).toMatch(/proof result-hash verified/);
  });

  it('prints the MCP capability object with capabilities --binding mcp --json', async () => {
    const host = plainHost();
    const io = capture();
    expect(await runCli(['acmp', 'capabilities', host.url, '--binding', 'mcp', '--json'], io)).toBe(0);
    expect(JSON.parse(io.stdout.join('\n'))).toMatchObject({
      binding: 'mcp',
      capability: { role: 'provider' },
      skills: [],
    });
  });

  it('refuses an unknown --binding as a usage error', async () => {
    const host = plainHost();
    expect(await runCli(['acmp', 'capabilities', host.url, '--binding', 'grpc'], capture())).toBe(2);
  });
});
