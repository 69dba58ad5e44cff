import { TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { decodeMessage, encodeAgentMessage, encodeTextPart } from '../part-codec.js';

/**
 * The executor for plain A2A messages no binding claims: it answers with a task that echoes the text
 * parts as an artifact and completes (submitted → working → artifact → completed). It tells a plain A2A
 * client what this agent is for instead of failing, and it is the task-path baseline the benchmarks use.
 */
export class EchoExecutor implements AgentExecutor {
  constructor(private readonly ids: IdSource = systemIds) {}

  execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const message = decodeMessage(context.userMessage);
    const text = message.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');
    if (!context.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: {
            state: TaskState.TASK_STATE_SUBMITTED,
            message: undefined,
            timestamp: new Date().toISOString(),
          },
          artifacts: [],
          history: [context.userMessage],
          metadata: undefined,
        }),
      );
    }
    bus.publish(AgentEvent.statusUpdate(status({ taskId, contextId }, TaskState.TASK_STATE_WORKING)));
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: this.ids.newId('art'),
          name: 'echo',
          description: '',
          parts: [encodeTextPart(text === '' ? '(no text parts)' : text)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate(
        status(
          { taskId, contextId },
          TaskState.TASK_STATE_COMPLETED,
          encodeAgentMessage({
            messageId: this.ids.newId('msg'),
            taskId,
            contextId,
            parts: [encodeTextPart('done')],
          }),
        ),
      ),
    );
    bus.finished();
    return Promise.resolve();
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(AgentEvent.statusUpdate(status({ taskId, contextId: '' }, TaskState.TASK_STATE_CANCELED)));
    bus.finished();
    return Promise.resolve();
  }
}

/** A status update of the task `on`. */
function status(
  { taskId, contextId }: { taskId: string; contextId: string },
  state: TaskState,
  message?: ReturnType<typeof encodeAgentMessage>,
) {
  return {
    taskId,
    contextId,
    status: { state, message, timestamp: new Date().toISOString() },
    metadata: undefined,
  };
}
