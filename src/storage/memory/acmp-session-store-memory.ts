import { KeyedWatchers } from '../../shared/keyed-watchers.js';
import { sameScope } from '../../acmp/provider/provider-checks.js';
import type { TaskScope } from '../../acmp/provider/task-store.js';
import { dueAt, type NegotiationSession } from '../../acmp/negotiation/session.js';
import type { CreateOutcome, SessionListQuery, SessionStore } from '../../acmp/negotiation/session-store.js';

/** An in-process {@link SessionStore} (the default without a database). */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, NegotiationSession>();
  private readonly watchers = new KeyedWatchers();

  create(session: NegotiationSession, cap: number, now: number): Promise<CreateOutcome> {
    // The cap counts the caller's sessions in every tenant; a retry is found within its own scope.
    const callers = [...this.sessions.values()].filter((s) => s.scope.agent === session.scope.agent);
    const existing = callers.find(
      (s) => sameScope(s.scope, session.scope) && s.openMessageId === session.openMessageId,
    );
    if (existing) return Promise.resolve({ kind: 'exists', existing });
    if (callers.filter((s) => (dueAt(s) ?? -Infinity) >= now).length >= cap)
      return Promise.resolve({ kind: 'cap_reached' });
    this.sessions.set(session.id, session);
    return Promise.resolve({ kind: 'created' });
  }

  get(id: string): Promise<NegotiationSession | undefined> {
    return Promise.resolve(this.sessions.get(id));
  }

  byOpenMessage(scope: TaskScope, messageId: string): Promise<NegotiationSession | undefined> {
    return Promise.resolve(
      [...this.sessions.values()].find((s) => sameScope(s.scope, scope) && s.openMessageId === messageId),
    );
  }

  update(next: NegotiationSession): Promise<boolean> {
    const current = this.sessions.get(next.id);
    if (current?.version !== next.version - 1) return Promise.resolve(false);
    this.sessions.set(next.id, next);
    this.watchers.emit(next.id, undefined);
    return Promise.resolve(true);
  }

  due(now: number, limit: number, scope?: TaskScope): Promise<NegotiationSession[]> {
    const due = [...this.sessions.values()].filter((s) => {
      const at = dueAt(s);
      return at !== null && at < now && (scope === undefined || sameScope(s.scope, scope));
    });
    return Promise.resolve(due.slice(0, limit));
  }

  countOpen(now: number): Promise<number> {
    return Promise.resolve([...this.sessions.values()].filter((s) => (dueAt(s) ?? -Infinity) >= now).length);
  }

  list(
    scope: TaskScope,
    query: SessionListQuery,
  ): Promise<{ sessions: NegotiationSession[]; total: number }> {
    const matching = [...this.sessions.values()]
      .filter((s) => sameScope(s.scope, scope))
      .filter((s) => query.contextId === undefined || s.contextId === query.contextId)
      .filter((s) => query.phases === undefined || query.phases.includes(s.phase))
      .filter((s) => query.updatedAfter === undefined || s.updatedAt > query.updatedAfter)
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    const after = query.after;
    const page = after
      ? matching.filter(
          (s) => s.updatedAt < after.updatedAt || (s.updatedAt === after.updatedAt && s.id < after.taskId),
        )
      : matching;
    return Promise.resolve({ sessions: page.slice(0, query.limit), total: matching.length });
  }

  watch(id: string, listener: () => void): () => void {
    return this.watchers.watch(id, listener);
  }
}
