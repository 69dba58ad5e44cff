import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { encodeTextPart, encodeUserMessage } from '../../src/a2a/part-codec.js';
import { ACMP_EXTENSION_URI } from '../../src/acmp/wire/constants.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { selectModules } from '../../src/cli/host-modules.js';
import { shared } from '../helpers/cleanup.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

/** The resubscribe task works for 2 × this (the TCK's TCK_STREAMING_TIMEOUT, shortened for tests). */
const TIMEOUT_MS = 150;

// The TCK module beside both commerce modules, over all three transports; every test uses fresh ids.
const theHost = shared(() =>
  startTestHost({
    flags: { 'grpc-port': '0', 'no-personal-data': true },
    modules: selectModules(resolveHostConfig({}, {}), {
      modules: ['acmp', 'acpspec', 'tck'],
      tckStreamingTimeoutMs: TIMEOUT_MS,
    }),
  }),
);

type Transport = 'JSONRPC' | 'HTTP+JSON' | 'GRPC';

async function clientOver(transport: Transport = 'JSONRPC'): Promise<Client> {
  return createA2AClient(await fetchAgentCard(theHost().url), { transport });
}

/** A request with a TCK-style message id (`tck-<scenario>-<session>`, as the TCK's `tck_id` builds it). */
function request(prefix: string, taskId?: string) {
  return {
    tenant: '',
    message: encodeUserMessage({
      messageId: `${prefix}-${crypto.randomUUID().slice(0, 8)}`,
      parts: [encodeTextPart('TCK test')],
      ...(taskId ? { taskId } : {}),
    }),
    configuration: undefined,
    metadata: undefined,
  };
}

async function sendTask(client: Client, prefix: string, taskId?: string): Promise<Task> {
  const result = await client.sendMessage(request(prefix, taskId));
  if (!('id' in result)) throw new Error(`expected a task for ${prefix}`);
  return result;
}

async function collect(stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The stream as `case:detail` strings (status state, artifact text). */
function shape(events: readonly StreamResponse[]): string[] {
  return events.map((e) => {
    const p = e.payload;
    if (p?.$case === 'statusUpdate') return `status:${TaskState[p.value.status?.state ?? 0]}`;
    if (p?.$case === 'artifactUpdate') return `artifact:${p.value.artifact?.parts.map(textOf).join('')}`;
    return p?.$case ?? 'none';
  });
}

function textOf(part: Part): string {
  return part.content?.$case === 'text' ? part.content.value : '';
}

const statusText = (task: Task): string => task.status?.message?.parts.map(textOf).join('') ?? '';

describe.each(['JSONRPC', 'HTTP+JSON', 'GRPC'] as const)('TCK scenarios over %s', (transport) => {
  it('tck-complete-task completes the task with the message "Hello from TCK"', async () => {
    const task = await sendTask(await clientOver(transport), 'tck-complete-task');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statusText(task)).toBe('Hello from TCK');
  });

  it('tck-artifact-file completes with a raw file part output.txt (text/plain)', async () => {
    const task = await sendTask(await clientOver(transport), 'tck-artifact-file');
    const part = task.artifacts[0]?.parts[0];
    expect(part?.content?.$case).toBe('raw');
    expect(part?.content?.$case === 'raw' && Buffer.from(part.content.value).toString()).toBe('tck');
    expect([part?.filename, part?.mediaType]).toEqual(['output.txt', 'text/plain']);
  });

  it('tck-message-response answers with a Message, not a task', async () => {
    const result = await (await clientOver(transport)).sendMessage(request('tck-message-response'));
    expect('id' in result).toBe(false);
    const message = result as Message;
    expect(message.role).toBe(Role.ROLE_AGENT);
    expect(message.parts.map(textOf).join('')).toBe('Direct message response');
  });

  it('tck-stream-001 streams working, the artifact, then completed', async () => {
    const events = await collect((await clientOver(transport)).sendMessageStream(request('tck-stream-001')));
    expect(shape(events)).toEqual([
      'task',
      'status:TASK_STATE_WORKING',
      'artifact:Stream hello from TCK',
      'status:TASK_STATE_COMPLETED',
    ]);
  });
});

describe('TCK unary scenarios (core_operations.feature)', () => {
  it('tck-artifact-text completes with the text artifact "Generated text content"', async () => {
    const task = await sendTask(await clientOver(), 'tck-artifact-text');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts.map((a) => a.parts.map(textOf).join(''))).toEqual(['Generated text content']);
    expect(task.artifacts[0]?.artifactId).not.toBe('');
  });

  it('tck-artifact-file-url wins over tck-artifact-file (longest prefix): a url part', async () => {
    const task = await sendTask(await clientOver(), 'tck-artifact-file-url');
    const part = task.artifacts[0]?.parts[0];
    expect(part?.content).toEqual({ $case: 'url', value: 'https://example.com/output.txt' });
    expect([part?.filename, part?.mediaType]).toEqual(['output.txt', 'text/plain']);
  });

  it('tck-artifact-data completes with the data part {"key":"value","count":42}', async () => {
    const task = await sendTask(await clientOver(), 'tck-artifact-data');
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({
      $case: 'data',
      value: { key: 'value', count: 42 },
    });
  });

  it('tck-input-required leaves the task input-required; a tck-complete-task follow-up completes it', async () => {
    const client = await clientOver();
    const first = await sendTask(client, 'tck-input-required');
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const again = await sendTask(client, 'tck-input-required', first.id);
    expect([again.id, again.status?.state]).toEqual([first.id, TaskState.TASK_STATE_INPUT_REQUIRED]);
    const done = await sendTask(client, 'tck-complete-task', first.id);
    expect([done.id, done.status?.state]).toEqual([first.id, TaskState.TASK_STATE_COMPLETED]);
    const fetched = await client.getTask({ tenant: '', id: first.id, historyLength: undefined });
    expect(fetched.history.filter((m) => m.role === Role.ROLE_USER)).toHaveLength(3);
  });

  it('tck-input-required gives a task CancelTask cancels', async () => {
    const client = await clientOver();
    const task = await sendTask(client, 'tck-input-required');
    const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('tck-reject-task rejects the task with the message "rejected"', async () => {
    const task = await sendTask(await clientOver(), 'tck-reject-task');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(statusText(task)).toBe('rejected');
  });

  it('a message id with no TCK prefix gets the host’s plain echo', async () => {
    const task = await sendTask(await clientOver(), 'tck-dm-test-001');
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts.map(textOf).join('')).toBe('TCK test');
  });
});

describe('TCK streaming scenarios (streaming.feature)', () => {
  it.each([
    ['tck-stream-002', ['task', 'status:TASK_STATE_COMPLETED']],
    [
      'tck-stream-003',
      ['task', 'status:TASK_STATE_WORKING', 'artifact:Stream task lifecycle', 'status:TASK_STATE_COMPLETED'],
    ],
    [
      'tck-stream-ordering-001',
      ['task', 'status:TASK_STATE_WORKING', 'artifact:Ordered output', 'status:TASK_STATE_COMPLETED'],
    ],
    [
      'tck-stream-artifact-text',
      ['task', 'status:TASK_STATE_WORKING', 'artifact:Streamed text content', 'status:TASK_STATE_COMPLETED'],
    ],
    [
      'tck-stream-artifact-file',
      ['task', 'status:TASK_STATE_WORKING', 'artifact:', 'status:TASK_STATE_COMPLETED'],
    ],
  ])('%s streams %j', async (prefix, expected) => {
    const events = await collect((await clientOver()).sendMessageStream(request(prefix)));
    expect(shape(events)).toEqual(expected);
  });

  it('tck-stream-artifact-chunked streams two chunks of one artifact, the second the last', async () => {
    for (const transport of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await clientOver(transport);
      const events = await collect(client.sendMessageStream(request('tck-stream-artifact-chunked')));
      const chunks = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value] : []));
      expect(chunks.map((c) => [textOf(c.artifact!.parts[0]!), c.append, c.lastChunk])).toEqual([
        ['chunk-1 ', true, false],
        ['chunk-2', true, true],
      ]);
      expect(chunks[1]?.artifact?.artifactId).toBe(chunks[0]?.artifact?.artifactId);
      const task = await client.getTask({ tenant: '', id: chunks[0]!.taskId, historyLength: undefined });
      expect(task.artifacts.map((a) => a.parts.map(textOf).join(''))).toEqual(['chunk-1 chunk-2']);
    }
  });

  it('test-resubscribe-message-id keeps the task working until a resubscriber sees it complete', async () => {
    const client = await clientOver();
    const stream = client.sendMessageStream(request('test-resubscribe-message-id'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    const working = await stream.next();
    expect(shape([working.value as StreamResponse])).toEqual(['status:TASK_STATE_WORKING']);
    const started = Date.now();
    const resubscribed = await collect(client.resubscribeTask({ tenant: '', id: taskId }));
    // The resubscriber is answered while the task still works, and sees it end only after the wait.
    expect(shape(resubscribed).at(-1)).toBe('status:TASK_STATE_COMPLETED');
    expect(resubscribed[0]?.payload?.$case).toBe('task');
    expect(Date.now() - started).toBeGreaterThan(TIMEOUT_MS);
    expect(shape(await collect(stream))).toEqual(['status:TASK_STATE_COMPLETED']);
  });

  it('test-resubscribe-message-id ends canceled, publishing nothing more, when CancelTask comes first', async () => {
    const client = await clientOver();
    const stream = client.sendMessageStream(request('test-resubscribe-message-id'));
    const first = await stream.next();
    const taskId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    await stream.next(); // working
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(shape(await collect(stream))).toEqual(['status:TASK_STATE_CANCELED']);
    const later = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    expect(later.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });
});

describe('the tck module beside the commerce modules', () => {
  it('adds its skill to a card that still lists the ACMP extension', async () => {
    const card = await fetchAgentCard(theHost().url);
    expect(card.skills.map((s) => s.id)).toContain('a2a-tck');
    expect(card.capabilities?.extensions.map((e) => e.uri)).toContain(ACMP_EXTENSION_URI);
  });
});
