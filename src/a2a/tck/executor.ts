import { TaskState, type Message, type Part, type TaskStatus } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { isoTime, systemClock, type Clock } from '../../shared/clock.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { encodeAgentMessage, encodeDataPart, encodeTextPart } from '../part-codec.js';
import { scenarioFor, type TckPart, type TckScenario, type TckStep } from './scenarios.js';

/** The TCK's default `TCK_STREAMING_TIMEOUT` (2 s, SUT_REQUIREMENTS.md). */
const TCK_DEFAULT_STREAMING_TIMEOUT_MS = 2000;

export interface TckExecutorOptions {
  /** Serves every message whose id selects no TCK scenario (the host's plain-A2A executor). */
  readonly fallback: AgentExecutor;
  /** The TCK's `TCK_STREAMING_TIMEOUT`; the resubscribe task stays working for twice this. */
  readonly streamingTimeoutMs?: number;
  readonly ids?: IdSource;
  readonly clock?: Clock;
}

/** One scenario being played: the SDK's request, its event bus, and the signal cancel aborts. */
interface ScenarioCall {
  readonly context: RequestContext;
  readonly bus: ExecutionEventBus;
  readonly signal: AbortSignal;
}

/** The ids of the task one call works on. */
interface TaskIds {
  readonly taskId: string;
  readonly contextId: string;
}

/**
 * The opt-in executor for the official A2A TCK (`serve --modules tck`, docs/conformance.md): a message
 * whose `messageId` starts with one of the TCK's prefixes gets the behaviour its scenario names
 * (./scenarios.ts, longest prefix first); any other message goes to the fallback, so the host answers
 * plain A2A clients as it always does. Only plain A2A messages reach it: messages a commerce binding
 * claims (ACMP, ACPspec) are routed to that binding before the SDK's handler runs.
 */
export class TckExecutor implements AgentExecutor {
  private readonly fallback: AgentExecutor;
  private readonly streamingTimeoutMs: number;
  private readonly ids: IdSource;
  private readonly clock: Clock;
  /** Scenarios still running (the resubscribe wait), by task id: cancel aborts the wait. */
  private readonly running = new Map<string, { ids: TaskIds; abort: AbortController }>();

  constructor(options: TckExecutorOptions) {
    this.fallback = options.fallback;
    this.streamingTimeoutMs = options.streamingTimeoutMs ?? TCK_DEFAULT_STREAMING_TIMEOUT_MS;
    this.ids = options.ids ?? systemIds;
    this.clock = options.clock ?? systemClock;
  }

  async execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const scenario = scenarioFor(context.userMessage.messageId);
    if (!scenario) return this.fallback.execute(context, bus);
    const ids = { taskId: context.taskId, contextId: context.contextId };
    const abort = new AbortController();
    this.running.set(ids.taskId, { ids, abort });
    try {
      await this.play(scenario, { context, bus, signal: abort.signal });
    } finally {
      this.running.delete(ids.taskId);
    }
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const run = this.running.get(taskId);
    if (!run) return this.fallback.cancelTask(taskId, bus);
    run.abort.abort();
    bus.publish(AgentEvent.statusUpdate(this.status(run.ids, TaskState.TASK_STATE_CANCELED)));
    bus.finished();
    return Promise.resolve();
  }

  /** Publishes the scenario's steps in order; stops, publishing nothing more, once the task is canceled. */
  private async play(scenario: TckScenario, call: ScenarioCall): Promise<void> {
    const { context, bus, signal } = call;
    const ids = { taskId: context.taskId, contextId: context.contextId };
    const first = scenario.steps[0];
    if (first?.kind === 'message') {
      // A Message reply instead of a task (A2A §3.1.1: SendMessage returns a Task or a Message).
      bus.publish(AgentEvent.message(this.agentMessage(ids, first.text, false)));
      bus.finished();
      return;
    }
    if (!context.task) bus.publish(AgentEvent.task(this.newTask(ids, context.userMessage)));
    let chunkId: string | undefined;
    for (const step of scenario.steps) {
      if (step.kind === 'wait') {
        if (!(await this.wait(step.timeouts * this.streamingTimeoutMs, signal))) return;
        continue;
      }
      if (step.kind === 'artifact') {
        const artifactId = (step.append ? chunkId : undefined) ?? this.ids.newId('art');
        chunkId = step.append && step.lastChunk !== true ? artifactId : undefined;
        bus.publish(AgentEvent.artifactUpdate(this.artifact(ids, step, artifactId)));
        continue;
      }
      bus.publish(AgentEvent.statusUpdate(this.statusOf(ids, step)));
    }
    bus.finished();
  }

  /** The status a status step sets. */
  private statusOf(ids: TaskIds, step: Exclude<TckStep, { kind: 'wait' | 'artifact' }>) {
    switch (step.kind) {
      case 'working':
        return this.status(ids, TaskState.TASK_STATE_WORKING);
      case 'complete':
        return this.status(
          ids,
          TaskState.TASK_STATE_COMPLETED,
          step.message === undefined ? undefined : this.agentMessage(ids, step.message, true),
        );
      case 'input-required':
        return this.status(ids, TaskState.TASK_STATE_INPUT_REQUIRED);
      case 'reject':
        // A rejected task (A2A TaskState REJECTED), not a thrown error: the host turns an executor's thrown
        // error into a generic internal error (src/a2a/host/mount.ts), which would tell the TCK nothing.
        return this.status(ids, TaskState.TASK_STATE_REJECTED, this.agentMessage(ids, step.text, true));
      case 'message':
        // Only a scenario's first step can be a message reply (play() answers it before any task).
        return this.status(ids, TaskState.TASK_STATE_COMPLETED, this.agentMessage(ids, step.text, true));
    }
  }

  /** Resolves true after `ms`, false (at once) when the task is canceled first. */
  private wait(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(true), ms);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private newTask(ids: TaskIds, userMessage: Message) {
    return {
      id: ids.taskId,
      contextId: ids.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: isoTime(this.clock) },
      artifacts: [],
      history: [userMessage],
      metadata: undefined,
    };
  }

  private artifact(ids: TaskIds, step: Extract<TckStep, { kind: 'artifact' }>, artifactId: string) {
    return {
      ...ids,
      artifact: {
        artifactId,
        name: '',
        description: '',
        parts: step.parts.map(encodeTckPart),
        metadata: undefined,
        extensions: [],
      },
      append: step.append ?? false,
      lastChunk: step.append ? step.lastChunk === true : true,
      metadata: undefined,
    };
  }

  private status(ids: TaskIds, state: TaskState, message?: Message) {
    const status: TaskStatus = { state, message, timestamp: isoTime(this.clock) };
    return { ...ids, status, metadata: undefined };
  }

  /** An agent message; `inTask` says whether it belongs to the task (a direct reply names no task). */
  private agentMessage(ids: TaskIds, text: string, inTask: boolean): Message {
    return encodeAgentMessage({
      messageId: this.ids.newId('msg'),
      contextId: ids.contextId,
      ...(inTask ? { taskId: ids.taskId } : {}),
      parts: [encodeTextPart(text)],
    });
  }
}

/** A scenario's part as an SDK part. */
function encodeTckPart(part: TckPart): Part {
  switch (part.kind) {
    case 'text':
      return encodeTextPart(part.text);
    case 'data':
      return encodeDataPart(part.data, 'application/json');
    case 'file':
      return {
        content: { $case: 'raw', value: Buffer.from(part.bytes, 'utf8') },
        metadata: undefined,
        filename: part.filename,
        mediaType: part.mediaType,
      };
    case 'file-url':
      return {
        content: { $case: 'url', value: part.url },
        metadata: undefined,
        filename: part.filename,
        mediaType: part.mediaType,
      };
  }
}
