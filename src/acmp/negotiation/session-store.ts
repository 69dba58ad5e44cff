import type { TaskScope } from '../provider/task-store.js';
import type { NegotiationOptions } from './negotiator.js';
import type { NegotiationSession, SessionPhase } from './session.js';

/** Filters and page of {@link SessionStore.list}; the order is `updatedAt` then `id`, both descending. */
export interface SessionListQuery {
  readonly limit: number;
  readonly contextId?: string;
  readonly phases?: readonly SessionPhase[];
  readonly updatedAfter?: number;
  /** The last session of the previous page. */
  readonly after?: { readonly updatedAt: number; readonly taskId: string };
}

/** What creating a session found. */
export type CreateOutcome =
  | { readonly kind: 'created' }
  /** The caller already opened a session with this message id (a retry of the opening request). */
  | { readonly kind: 'exists'; readonly existing: NegotiationSession }
  /** The caller has `max_open_sessions` open sessions (in all tenants together). */
  | { readonly kind: 'cap_reached' };

/**
 * Negotiation sessions shared by every host of a provider (memory, SQLite, PostgreSQL). Each write is one
 * atomic statement; a change is a compare-and-set on the session's version, so two racing transitions
 * (two accepts on two hosts) leave exactly one winner. Changes are signalled to every host that watches
 * the session.
 */
export interface SessionStore {
  /**
   * Inserts a new session unless its caller already opened one with the same message id (in the same
   * scope), or has `cap` sessions open at `now` (open phase and not yet due) counted over every tenant:
   * the cap is per caller identity (`scope.agent`), so a tenant is no way around it.
   */
  create(session: NegotiationSession, cap: number, now: number): Promise<CreateOutcome>;
  get(id: string): Promise<NegotiationSession | undefined>;
  /** The session a caller opened with `messageId`. */
  byOpenMessage(scope: TaskScope, messageId: string): Promise<NegotiationSession | undefined>;
  /** Writes `next` iff the stored version is still `next.version - 1`; true when it did. */
  update(next: NegotiationSession): Promise<boolean>;
  /** Open sessions due before `now` (for the expiry sweep), at most `limit`, of one caller when `scope` is given. */
  due(now: number, limit: number, scope?: TaskScope): Promise<NegotiationSession[]>;
  /** How many sessions are open at `now` (open phase, not yet due), over every caller (for the metrics). */
  countOpen(now: number): Promise<number>;
  list(scope: TaskScope, query: SessionListQuery): Promise<{ sessions: NegotiationSession[]; total: number }>;
  /** Calls `listener` whenever the session may have changed (also after lost signals); returns the unwatch. */
  watch(id: string, listener: () => void): () => void;
  close?(): Promise<void>;
}

/**
 * The negotiator's resolver of an invoke's `referenceTaskIds` over a session store: a session names its
 * agreement (`offerKey: null` when it ended without one). Any scope: the negotiator refuses another
 * caller's agreement with -32602 `agreement_foreign`.
 */
export function sessionReferences(store: SessionStore): NonNullable<NegotiationOptions['references']> {
  return async (taskId) => {
    const session = await store.get(taskId);
    return session && { offerKey: session.agreementKey ?? null };
  };
}
