import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { fetchAgentCard } from '../../src/a2a/client.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { AcmpError } from '../../src/acmp/wire/errors.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, postJson } from '../helpers/host.js';
import { acmpHost, countingCapability, invokeRoot, jsonRpcUrl, rpc } from './helpers.js';

afterEach(async () => {
  vi.restoreAllMocks();
  await cleanup();
});

// The tests on the default configuration send fresh task ids or only read the card: one host serves them.
const plainHost = shared(() => acmpHost());

const TOKEN = 'acmp-buyer-token-0123456789';
const SUMMARY_TEXT =
  'Sales rose in March. The office moved. Profit improved strongly. Nothing else happened.';

describe('v0.3 clients (A2A binding §1: data parts without a media type)', () => {
  for (const transport of ['JSONRPC', 'HTTP+JSON'] as const) {
    it(`invokes and streams through the SDK's v0.3 ${transport} transport`, async () => {
      const host = plainHost();
      const buyer = await createAcmpBuyer({ agentUrl: host.url, protocolVersion: '0.3', transport });
      const result = await buyer.invoke({
        capability: 'sentiment-analysis',
        input: { type: 'text', data: 'Revenue grew 12% YoY.' },
        max_price_cu: 0.005,
        proof_method: 'result-hash',
      });
      expect(result.output).toMatchObject({ data: { sentiment: 'positive' } });
      const kinds: string[] = [];
      for await (const e of buyer.stream({
        capability: 'summarize',
        input: { type: 'text', data: SUMMARY_TEXT },
        max_price_cu: 1,
        stream: true,
        proof_method: 'result-hash',
      }))
        kinds.push(e.kind);
      expect(kinds.filter((k) => k === 'chunk').length).toBeGreaterThan(0);
      expect(kinds.at(-1)).toBe('result');
    });
  }

  it('accepts a raw v0.3 message whose untyped data part has an ACMP root', async () => {
    const host = plainHost();
    const root = invokeRoot();
    const message = {
      kind: 'message',
      messageId: 'm03',
      role: 'user',
      taskId: root.params.task_id,
      parts: [{ kind: 'data', data: root }],
    };
    const res = await postJson(jsonRpcUrl(host), rpc('message/send', { message }), {
      'X-A2A-Extensions': ACMP_EXTENSION_URI,
    });
    const task = (
      res.body as {
        result: {
          id: string;
          status: { state: string; message: { parts: { data: Record<string, unknown> }[] } };
        };
      }
    ).result;
    expect(task.id).toBe(root.params.task_id);
    expect(task.status.state).toBe('completed');
    expect(task.status.message.parts[0]!.data.acmp_result).toBeDefined();
  });

  it('still refuses a v1.0 data part without the media type (-32600)', async () => {
    const host = plainHost();
    const root = invokeRoot();
    const message = {
      message_id: 'm10',
      role: 'user',
      task_id: root.params.task_id,
      parts: [{ data: root }],
    };
    const res = await postJson(jsonRpcUrl(host), rpc('SendMessage', { message }), {
      'A2A-Version': '1.0',
      'A2A-Extensions': ACMP_EXTENSION_URI,
    });
    const reply = (
      res.body as { result: { message: { parts: { data: { acmp_error: { code: number } } }[] } } }
    ).result.message;
    expect(reply.parts[0]!.data.acmp_error.code).toBe(-32600);
  });
});

describe('the buyer never relies on an unadvertised feature (A2A binding §2)', () => {
  it('refuses stream: true locally with -33007 when output streaming is not advertised; nothing is sent', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability], outputStreaming: false });
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const failure = await buyer
      .invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' }, stream: true })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AcmpError);
    expect(failure).toMatchObject({ code: -33007, data: { feature: 'output_streaming' } });
    expect(fetchSpy).not.toHaveBeenCalled();
    expect(capability.runs()).toBe(0);
  });

  it('refuses input_stream: true locally with -33007', async () => {
    const host = plainHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url });
    await expect(buyer.invoke({ capability: 'summarize', input_stream: true })).rejects.toMatchObject({
      code: -33007,
    });
  });

  it('refuses an agent whose card has no ACMP provider extension with -33007', async () => {
    const host = plainHost();
    const plain = await fetchAgentCard(host.url);
    const stripped = { ...plain, capabilities: { ...plain.capabilities!, extensions: [] } };
    await expect(createAcmpBuyer({ card: stripped })).rejects.toMatchObject({ code: -33007 });
  });
});

describe('bearer auth', () => {
  // Invokes with fresh task ids; the refusal test counts runs of its own capability, so keeps its own host.
  const tokenHost = shared(() => acmpHost({ flags: { token: [TOKEN] } }));

  it('invokes with a token against a host started with --token', async () => {
    const host = tokenHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, token: TOKEN });
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'great results' },
      max_price_cu: 0.005,
    });
    expect(result.output).toMatchObject({ data: { sentiment: 'positive' } });
  });

  it('accepts the token in the { auth } shape too', async () => {
    const host = tokenHost();
    const buyer = await createAcmpBuyer({ agentUrl: host.url, auth: { token: TOKEN } });
    const result = await buyer.invoke({
      capability: 'sentiment-analysis',
      input: { type: 'text', data: 'good' },
      max_price_cu: 0.005,
    });
    expect(result.cost_cu).toBeLessThanOrEqual(0.005);
  });

  it('fails without the token and runs nothing', async () => {
    const capability = countingCapability();
    const host = await acmpHost({ capabilities: [capability], flags: { token: [TOKEN] } });
    // Retries stay at their default: a refusal must fail at once, not after the retry budget.
    const buyer = await createAcmpBuyer({ agentUrl: host.url, retryDelayMs: 60_000 });
    await expect(
      buyer.invoke({ capability: 'count-runs', input: { type: 'text', data: 'x' } }),
    ).rejects.toMatchObject({
      name: 'LocalError',
      code: 'REFUSED',
    });
    expect(capability.runs()).toBe(0);
  });
});
