import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState } from '@a2a-js/sdk';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

// Every test makes its own tasks (random message ids): one plain host serves the whole file.
const theHost = shared(() => startTestHost());

function textMessage(text: string) {
  return encodeUserMessage({ messageId: crypto.randomUUID(), parts: [encodeTextPart(text)] });
}

describe('agent card (A2A §8.2)', () => {
  it('is fetched and parsed by the SDK, listing both transports at 1.0 and streaming', async () => {
    const host = theHost();
    const card = await fetchAgentCard(host.url);
    const v1 = card.supportedInterfaces
      .filter((i) => i.protocolVersion === '1.0')
      .map((i) => i.protocolBinding);
    expect(v1.sort()).toEqual(['HTTP+JSON', 'JSONRPC']);
    expect(card.supportedInterfaces.some((i) => i.protocolVersion === '0.3')).toBe(true);
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.supportedInterfaces[0]!.url.startsWith(host.url)).toBe(true);
  });
});

describe.each(['JSONRPC', 'HTTP+JSON'] as const)('core operations over %s', (transport) => {
  it('SendMessage creates a completed task that GetTask returns', async () => {
    const host = theHost();
    const client = await createA2AClient(await fetchAgentCard(host.url), { transport });
    const result = await client.sendMessage({
      tenant: '',
      message: textMessage('hello'),
      configuration: undefined,
      metadata: undefined,
    });
    expect('id' in result).toBe(true);
    const task = result as { id: string; status?: { state: TaskState } };
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const fetched = await client.getTask({ tenant: '', id: task.id });
    expect(fetched.id).toBe(task.id);
    expect(fetched.history[0]?.role).toBe(Role.ROLE_USER);
  });

  it('SendStreamingMessage streams the task lifecycle to completion', async () => {
    const host = theHost();
    const client = await createA2AClient(await fetchAgentCard(host.url), { transport });
    const kinds: string[] = [];
    for await (const event of client.sendMessageStream({
      tenant: '',
      message: textMessage('hi'),
      configuration: undefined,
      metadata: undefined,
    })) {
      kinds.push(event.payload?.$case ?? 'none');
    }
    expect(kinds[0]).toBe('task');
    expect(kinds).toContain('artifactUpdate');
    expect(kinds.at(-1)).toBe('statusUpdate');
  });

  it('CancelTask of a finished task gets TaskNotCancelable', async () => {
    const host = theHost();
    const client = await createA2AClient(await fetchAgentCard(host.url), { transport });
    const task = (await client.sendMessage({
      tenant: '',
      message: textMessage('x'),
      configuration: undefined,
      metadata: undefined,
    })) as { id: string };
    await expect(client.cancelTask({ tenant: '', id: task.id, metadata: undefined })).rejects.toThrow(
      /cancel/i,
    );
  });
});

describe.each(['JSONRPC', 'HTTP+JSON'] as const)(
  'a v0.3 client over %s (SDK compatibility layer)',
  (transport) => {
    it('round-trips SendMessage and GetTask', async () => {
      const host = theHost();
      const client = await createA2AClient(await fetchAgentCard(host.url), {
        transport,
        protocolVersion: '0.3',
      });
      expect(client.protocolVersion).toBe('0.3');
      const result = await client.sendMessage({
        tenant: '',
        message: textMessage('legacy hello'),
        configuration: undefined,
        metadata: undefined,
      });
      const task = result as { id: string };
      const fetched = await client.getTask({ tenant: '', id: task.id });
      expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });
  },
);
