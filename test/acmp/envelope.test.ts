import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { InvokeParams } from '../../src/acmp/wire/task-messages.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import {
  acmpHost,
  acmpMessage,
  fixture,
  invokeRoot,
  replyError,
  replyRoot,
  sendRaw,
  V1,
  type WireMessage,
} from './helpers.js';

afterEach(cleanup);

interface SeedMessage {
  task_id: string;
  parts: { data: { acmp_method: string; params: Record<string, unknown> }; media_type: string }[];
}

const seed = fixture<SeedMessage & Record<string, unknown>>('a2a/seed-000-message.json');
const seedParams = seed.parts[0]!.data.params;

/** A host whose escrow verifier records the params the provider core received. */
async function recordingHost(): Promise<{ host: { url: string }; received: InvokeParams[] }> {
  const received: InvokeParams[] = [];
  const host = await acmpHost({
    escrow: (_escrowId, params) => {
      received.push(params);
      return Promise.resolve();
    },
  });
  return { host, received };
}

describe('envelope: the seed message (A2A binding §1)', () => {
  // A fresh host per test: the literal seed carries a fixed task_id, so on a shared host every send
  // after the first would be a replay of the stored task.
  it('executes the literal seed message sent raw over JSON-RPC with A2A-Version 1.0', async () => {
    const { host } = await recordingHost();
    const body = await sendRaw(host, seed);
    expect(body.error).toBeUndefined();
    expect(body.result?.task?.id).toBe(seed.task_id);
    expect(body.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
    const result = replyRoot(body)?.acmp_result as { task_id: string; cost_cu: number; output: unknown };
    expect(result.task_id).toBe(seedParams.task_id);
    expect(result.cost_cu).toBeLessThanOrEqual(seedParams.max_price_cu as number);
    expect(result.output).toMatchObject({ type: 'json', data: { sentiment: 'positive' } });
  });

  it('hands the provider core params byte-identical to the seed (JCS)', async () => {
    const { host, received } = await recordingHost();
    await sendRaw(host, seed);
    expect(received).toHaveLength(1);
    expect(canonicalJson(received[0])).toBe(canonicalJson(seedParams));
  });

  it('echoes the invoke byte-identically in the task history (JCS)', async () => {
    const { host } = await recordingHost();
    const body = await sendRaw(host, seed);
    const invoke = body.result?.task?.history?.[0];
    expect(invoke?.parts[0]?.mediaType).toBe('application/acmp+json');
    expect(canonicalJson(invoke?.parts[0]?.data)).toBe(canonicalJson(seed.parts[0]!.data));
  });

  it('answers with exactly one acmp_result data part in the ACMP media type', async () => {
    const { host } = await recordingHost();
    const message = (await sendRaw(host, seed)).result?.task?.status.message;
    expect(message?.role).toBe('ROLE_AGENT');
    expect(message?.parts).toHaveLength(1);
    expect(message?.parts[0]?.mediaType).toBe('application/acmp+json');
    expect(Object.keys(message?.parts[0]?.data ?? {})).toEqual(['acmp_result']);
  });

  it('places nothing in Message.metadata (A2A binding §3.1)', async () => {
    const { host } = await recordingHost();
    const task = (await sendRaw(host, seed)).result?.task;
    const messages: WireMessage[] = [
      ...(task?.history ?? []),
      ...(task?.status.message ? [task.status.message] : []),
    ];
    expect(messages.length).toBeGreaterThan(1);
    for (const m of messages) expect(m.metadata).toBeUndefined();
  });

  it('accepts an invoke without Message.task_id and uses params.task_id as the A2A task id', async () => {
    const { host } = await recordingHost();
    const root = invokeRoot();
    const message = acmpMessage(root);
    delete message.task_id;
    const body = await sendRaw(host, message);
    expect(body.result?.task?.id).toBe(root.params.task_id);
  });
});

describe('envelope: refusals (A2A binding §1, docs/acmp-core.md "Malformed payloads")', () => {
  // Refusals store nothing, so the tests share one host; each starts with an empty record.
  const recording = shared(recordingHost);
  beforeEach(() => {
    recording().received.length = 0;
  });

  it('refuses a data part with another media type with -32600', async () => {
    const { host, received } = recording();
    const message = {
      ...seed,
      task_id: 'task_mt',
      parts: [{ data: invokeRoot({ task_id: 'task_mt' }), media_type: 'application/json' }],
    };
    const body = await sendRaw(host, message);
    expect(replyError(body)?.code).toBe(-32600);
    expect(body.result?.message?.role).toBe('ROLE_AGENT');
    expect(received).toHaveLength(0);
  });

  it('refuses a malformed root (extra key) with -32600', async () => {
    const { host } = recording();
    const root = { ...invokeRoot(), acmp_result: {} };
    expect(replyError(await sendRaw(host, acmpMessage(root)))?.code).toBe(-32600);
  });

  it('refuses a root that is not an object-with-method with -32600', async () => {
    const { host } = recording();
    expect(
      replyError(
        await sendRaw(
          host,
          acmpMessage(
            { params: { task_id: 't' } },
            { parts: [{ data: { params: {} }, media_type: 'application/acmp+json' }] },
          ),
        ),
      )?.code,
    ).toBe(-32600);
  });

  it('refuses an ACMP message with more than one part with -32600', async () => {
    const { host } = recording();
    const message = acmpMessage(invokeRoot());
    message.parts = [...(message.parts as unknown[]), { text: 'and also this' }];
    expect(replyError(await sendRaw(host, message))?.code).toBe(-32600);
  });

  it('refuses an unknown ACMP method with -32601', async () => {
    const { host } = recording();
    expect(
      replyError(
        await sendRaw(host, acmpMessage({ acmp_method: 'acmp/frobnicate', params: { task_id: 't' } })),
      )?.code,
    ).toBe(-32601);
  });

  it('refuses invoke params that fail the schema with -32602 and no values in data', async () => {
    const { host } = recording();
    const error = replyError(
      await sendRaw(host, acmpMessage(invokeRoot({ max_price_cu: 'a secret string' }))),
    );
    expect(error?.code).toBe(-32602);
    expect(JSON.stringify(error)).not.toContain('a secret string');
  });

  it('refuses Message.task_id different from params.task_id, running nothing', async () => {
    const { host, received } = recording();
    const root = invokeRoot({ escrow_id: 'esc_1' });
    const body = await sendRaw(host, acmpMessage(root, { task_id: 'task_other' }));
    const error = replyError(body);
    expect(error?.code).toBe(-32602);
    expect(error?.data?.detail).toMatch(/Message\.task_id/);
    expect(body.result?.task).toBeUndefined();
    expect(received).toHaveLength(0);
  });

  it('refuses a task_id longer than 128 characters with -32602 (the host id limit)', async () => {
    const { host, received } = recording();
    const body = await sendRaw(
      host,
      acmpMessage(invokeRoot({ task_id: `task_${'x'.repeat(124)}`, escrow_id: 'esc_1' })),
    );
    // Message.task_id carries the same id: the host's edge refuses ids over 128 characters (docs/host.md).
    expect(body.error?.code ?? replyError(body)?.code).toBe(-32602);
    expect(received).toHaveLength(0);
  });

  it('answers A2A -32008 when the extension is not activated (A2A §4.6)', async () => {
    const { host, received } = recording();
    const body = await sendRaw(host, seed, V1);
    expect(body.error?.code).toBe(-32008);
    expect(received).toHaveLength(0);
  });

  it('passes plain A2A messages to the host executor (the card serves plain clients too)', async () => {
    // A host of its own: the demo capabilities at their normal pace.
    const host = await acmpHost({ capabilities: demoCapabilities() });
    const body = await sendRaw(host, { message_id: 'm1', role: 'user', parts: [{ text: 'hello' }] }, V1);
    expect(body.error).toBeUndefined();
    expect(body.result?.task?.status.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('parts labelled ACMP that carry no ACMP message (seed §1)', () => {
  it('refuses an ACMP-typed part with null data with -32600 instead of passing it on', async () => {
    const host = await acmpHost();
    const body = await sendRaw(host, {
      message_id: 'm-null',
      role: 'user',
      parts: [{ data: null, media_type: 'application/acmp+json' }],
    });
    expect(replyError(body)?.code).toBe(-32600);
  });
});
