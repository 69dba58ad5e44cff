import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';

/** A cursor in the task order every list uses: last update, then id, both descending. */
export interface TaskCursor {
  readonly updatedAt: number;
  readonly taskId: string;
}

/** One page of views a {@link TaskViewSource} is asked for. */
export interface TaskViewPage {
  /** The ListTasks request, whose filters the views must match. */
  readonly params: ListTasksRequest;
  /** The last task of the previous page; undefined for the first page. */
  readonly after: TaskCursor | undefined;
  /** At most this many views. */
  readonly limit: number;
}

/**
 * Tasks a binding keeps in its own record and shows to A2A as views (e.g. ACMP tasks). The host never
 * stores a copy of them in the SDK's task store.
 */
export interface TaskViewSource {
  load(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  /** Up to `limit` views after `after` in the list order, and the count of every match. */
  list(page: TaskViewPage, context: ServerCallContext): Promise<{ tasks: Task[]; total: number }>;
}

/**
 * The task store the SDK's request handler sees: binding views first, then the SDK's own store for plain
 * A2A tasks. GetTask, ListTasks, SubscribeToTask of finished tasks and push-config checks read one source
 * of truth per task; the SDK never writes a task a binding owns (refused with UnsupportedOperation).
 * Pages merge both sources in the SDK's order and with its page-token format.
 */
export class ViewingTaskStore implements TaskStore {
  constructor(
    private readonly inner: TaskStore,
    private readonly sources: readonly TaskViewSource[],
  ) {}

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    for (const source of this.sources) {
      const view = await source.load(taskId, context);
      if (view) return view;
    }
    return this.inner.load(taskId, context);
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    if (await this.ownedByView(task.id, context)) {
      throw new UnsupportedOperationError(
        `Task ${task.id} accepts only messages of the binding that owns it`,
      );
    }
    await this.inner.save(task, context);
  }

  /** Whether a binding owns the task id (for the caller). */
  async ownedByView(taskId: string, context: ServerCallContext): Promise<boolean> {
    for (const source of this.sources) if (await source.load(taskId, context)) return true;
    return false;
  }

  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? 50;
    const after = params.pageToken ? decodeCursor(params.pageToken) : undefined;
    const inner = await this.inner.list({ ...params, pageSize }, context);
    const pages = [{ tasks: inner.tasks, total: inner.totalSize, more: inner.nextPageToken !== '' }];
    for (const source of this.sources) {
      const page = await source.list({ params, after, limit: pageSize + 1 }, context);
      pages.push({
        tasks: page.tasks.slice(0, pageSize),
        total: page.total,
        more: page.tasks.length > pageSize,
      });
    }
    const merged = pages.flatMap((p) => p.tasks).sort(compareTasks);
    const tasks = merged.slice(0, pageSize);
    const more = merged.length > pageSize || pages.some((p) => p.more);
    const last = tasks.at(-1);
    return {
      tasks,
      nextPageToken: more && last ? encodeCursor({ updatedAt: updatedAt(last), taskId: last.id }) : '',
      pageSize,
      totalSize: pages.reduce((sum, p) => sum + p.total, 0),
    };
  }
}

function updatedAt(task: Task): number {
  const parsed = Date.parse(task.status?.timestamp ?? '');
  return Number.isNaN(parsed) ? 0 : parsed;
}

/** Newest first, then by id descending: the SDK store's order. */
function compareTasks(a: Task, b: Task): number {
  return updatedAt(b) - updatedAt(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** The SDK's page token: base64 of `<ISO timestamp>|<task id>`. */
function encodeCursor(cursor: TaskCursor): string {
  const stamp = cursor.updatedAt === 0 ? '' : new Date(cursor.updatedAt).toISOString();
  return Buffer.from(`${stamp}|${cursor.taskId}`).toString('base64');
}

/** @throws RequestMalformedError for a token that is not such a cursor. */
function decodeCursor(token: string): TaskCursor {
  const [stamp, ...id] = Buffer.from(token, 'base64').toString('utf8').split('|');
  if (id.length === 0) throw new RequestMalformedError('Invalid page token format.');
  const parsed = stamp ? Date.parse(stamp) : 0;
  return { updatedAt: Number.isNaN(parsed) ? 0 : parsed, taskId: id.join('|') };
}
