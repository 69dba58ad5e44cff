import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Role, TaskState, type AgentCard, type Message } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { buildAgentCard } from '../src/a2a/host/agent-card.js';
import { SDK_STORE_MIGRATIONS } from '../src/server/host-migrations.js';
import { openDatabase, type Database } from '../src/storage/sql/database.js';
import { migrateSets } from '../src/storage/sql/migrations.js';

/**
 * The baseline: a host made of the raw SDK only (DefaultRequestHandler + jsonRpcHandler over Express, the
 * SDK's own task store). Its executor does the minimal work per scenario, chosen by the user text:
 * `message` — answers with a Message; `task` — submitted → artifact → completed;
 * `stream:N` — a task, N working status updates (each with a message, as ours carry chunks) and completed.
 */
class BaselineExecutor implements AgentExecutor {
  private n = 0;

  execute(context: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = context;
    const part = context.userMessage.parts[0]?.content;
    const text = part?.$case === 'text' ? part.value : '';
    if (text === 'message') {
      bus.publish(AgentEvent.message(this.agentMessage('echo', '', contextId)));
      bus.finished();
      return Promise.resolve();
    }
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
    if (text.startsWith('stream:')) {
      const count = Number(text.slice('stream:'.length));
      for (let i = 0; i < count; i++) {
        bus.publish(
          AgentEvent.statusUpdate(this.status(taskId, contextId, TaskState.TASK_STATE_WORKING, `chunk ${i}`)),
        );
      }
    } else {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: `art-${++this.n}`,
            name: 'echo',
            description: '',
            parts: [textPart(text)],
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate(this.status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, 'done')),
    );
    bus.finished();
    return Promise.resolve();
  }

  cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: undefined,
          timestamp: new Date().toISOString(),
        },
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  }

  private status(taskId: string, contextId: string, state: TaskState, text: string) {
    return {
      taskId,
      contextId,
      status: {
        state,
        message: this.agentMessage(text, taskId, contextId),
        timestamp: new Date().toISOString(),
      },
      metadata: undefined,
    };
  }

  private agentMessage(text: string, taskId: string, contextId: string): Message {
    return {
      messageId: `m-${++this.n}`,
      taskId,
      contextId,
      role: Role.ROLE_AGENT,
      parts: [textPart(text)],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
  }
}

function textPart(text: string) {
  return {
    content: { $case: 'text' as const, value: text },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  };
}

/** Starts the baseline host on 127.0.0.1:0 with an in-memory or SQLite (the SDK's DatabaseTaskStore) store. */
export async function startBaselineHost(options: {
  store: 'memory' | 'sqlite';
  dataDir: string;
}): Promise<{ url: string; close(): Promise<void> }> {
  let database: Database | undefined;
  let taskStore: TaskStore = new InMemoryTaskStore();
  if (options.store === 'sqlite') {
    database = openDatabase({ url: `sqlite:${options.dataDir}/baseline.sqlite`, dataDir: options.dataDir });
    await migrateSets(database, SDK_STORE_MIGRATIONS);
    taskStore = new DatabaseTaskStore(database.db);
  }
  const app = express();
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = buildAgentCard({
    name: 'baseline',
    description: 'raw SDK baseline',
    version: '0.0.0',
    baseUrl: url,
    extensions: [],
    skills: [],
    bearer: false,
  });
  const handler = new DefaultRequestHandler(card, taskStore, new BaselineExecutor());
  app.use(
    '/a2a/jsonrpc',
    jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
  );
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database?.close();
    },
  };
}
