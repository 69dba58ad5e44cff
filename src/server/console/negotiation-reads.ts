import type { Database } from '../../storage/sql/database.js';
import { num, optNum, optStr, parseStored, str } from './tables.js';

/** One negotiation session (session mode, docs/acmp-negotiation.md). */
export interface ConsoleSession {
  readonly sessionId: string;
  readonly caller: string;
  readonly phase: string;
  readonly open: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly dueAt: number | undefined;
  readonly capability: string | undefined;
  /** The standing offer's price. */
  readonly priceCu: number | undefined;
  readonly rounds: number;
}

/** One accepted agreement (Layer 6 §4), flat or from a session. */
export interface ConsoleAgreement {
  readonly offerId: string;
  readonly caller: string;
  readonly capability: string | undefined;
  readonly priceCu: number | undefined;
  readonly acceptedAt: number;
  readonly invokeBy: number;
  readonly consumedBy: string | null;
  readonly escrowId: string | null;
}

const OPEN_PHASES = new Set(['quoting', 'offer', 'accepting']);

/** Sessions (when session mode runs) and agreements, newest first. */
export async function readNegotiation(
  database: Database,
  options: { limit: number; sessions: boolean },
): Promise<{ sessions: ConsoleSession[]; agreements: ConsoleAgreement[] }> {
  const sessions = options.sessions
    ? ((await database.db
        .selectFrom('acmp_sessions')
        .select(['session_id', 'agent', 'phase', 'created_at', 'updated_at', 'due_at', 'body'])
        .orderBy('updated_at', 'desc')
        .limit(options.limit)
        .execute()) as Record<string, unknown>[])
    : [];
  const agreements = (await database.db
    .selectFrom('acmp_agreements')
    .select(['offer_id', 'agent', 'terms', 'accepted_at', 'invoke_by', 'consumed_by', 'escrow_id'])
    .orderBy('accepted_at', 'desc')
    .limit(options.limit)
    .execute()) as Record<string, unknown>[];
  return {
    sessions: sessions.map((s) => {
      const body = parseStored(s.body) as
        { standing?: { capability?: unknown; price_cu?: unknown }; round?: unknown } | undefined;
      return {
        sessionId: str(s.session_id),
        caller: str(s.agent),
        phase: str(s.phase),
        open: OPEN_PHASES.has(str(s.phase)),
        createdAt: num(s.created_at),
        updatedAt: num(s.updated_at),
        dueAt: optNum(s.due_at),
        capability: typeof body?.standing?.capability === 'string' ? body.standing.capability : undefined,
        priceCu: typeof body?.standing?.price_cu === 'number' ? body.standing.price_cu : undefined,
        rounds: typeof body?.round === 'number' ? body.round : 0,
      };
    }),
    agreements: agreements.map((a) => {
      const terms = parseStored(a.terms) as { capability?: unknown; price_cu?: unknown } | undefined;
      return {
        offerId: str(a.offer_id),
        caller: str(a.agent),
        capability: typeof terms?.capability === 'string' ? terms.capability : undefined,
        priceCu: typeof terms?.price_cu === 'number' ? terms.price_cu : undefined,
        acceptedAt: num(a.accepted_at),
        invokeBy: num(a.invoke_by),
        consumedBy: optStr(a.consumed_by),
        escrowId: optStr(a.escrow_id),
      };
    }),
  };
}
