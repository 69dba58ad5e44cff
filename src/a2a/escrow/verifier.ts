import { ACMP_CODE, AcmpError, isAcmpError } from '../../acmp/wire/errors.js';
import { parseCu, roundCu } from '../../acmp/escrow/amounts.js';
import type { ReservationStore } from '../../acmp/escrow/reservations.js';
import { resolveInvoke, type InvokeParams } from '../../acmp/wire/task-messages.js';
import type { EscrowVerifier } from '../../acmp/provider/provider-types.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import type { EscrowClient, EscrowStatus } from './client.js';

/** Options of {@link createEscrowVerifier}. */
export interface EscrowVerifierOptions {
  /** The connection to the escrow agent this provider trusts (opened on first use). */
  agent: () => Promise<EscrowClient>;
  /** This provider's identity at that agent: the payee an escrow must be bound to. */
  payeeId: string;
  reservations: ReservationStore;
  /** What the task will cost in CU (the capability's price, capped by `max_price_cu`, Layer 1 §3.2). */
  priceOf: (params: InvokeParams) => number;
  /** How long after delivery the provider waits for the buyer's release before it claims. */
  claimDelayMs: number;
  /** Extra validity required beyond deadline + claim delay + window (default 60 s). */
  marginMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** Why an escrow is refused: `data.reason` of -33005 (docs/acmp-escrow.md §12 "The provider side"). */
export type EscrowRefusal =
  | 'unknown'
  | 'not_bound_to_provider'
  | 'not_open'
  | 'expired'
  | 'insufficient'
  | 'validity_too_short'
  | 'committed'
  | 'agent_unavailable';

/**
 * The provider's escrow check before any work (Layer 1 §3.3 -33005, docs/acmp-escrow.md §12 "The provider side"), against the escrow agent
 * over A2A (`acmp/escrowStatus`, L4 §4.7): the escrow is bound to this provider, open, holds at least this
 * task's cost (and no less than an agreed price allows), stays valid past the task's deadline plus the
 * claim delay and the challenge window, and backs no other task — the last reserved atomically, so one
 * escrow funds one task across every host. Every failure is -33005 with `data.reason`; the agent's own
 * -35xxx codes are never passed through (REF does, probe J1).
 */
export function createEscrowVerifier(options: EscrowVerifierOptions): EscrowVerifier {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const marginMs = options.marginMs ?? 60_000;
  return async (escrowId, params, { signal }) => {
    const refuse = (reason: EscrowRefusal): AcmpError => escrowRefusal(escrowId, reason);
    const status = await readStatus({ agent: options.agent, logger }, escrowId, signal);
    if (status.payee_id !== options.payeeId) throw refuse('not_bound_to_provider');
    if (status.expired === true) throw refuse('expired');
    if (status.state !== 'open') throw refuse('not_open');
    const cost = roundCu(options.priceOf(params), 'up');
    const agreed = typeof status.agreed_price_cu === 'number' ? nanoOf(status.agreed_price_cu) : undefined;
    if (nanoOf(status.remaining_cu) < cost || (agreed !== undefined && agreed < cost))
      throw refuse('insufficient');
    const window = typeof status.challenge_window_ms === 'number' ? status.challenge_window_ms : 0;
    const now = clock.now();
    const needed = now + resolveInvoke(params).timeoutMs + options.claimDelayMs + window + marginMs;
    if (typeof status.valid_until_ms !== 'number' || status.valid_until_ms < needed)
      throw refuse('validity_too_short');
    const held = await options.reservations.reserve({
      escrowId,
      taskId: params.task_id,
      amount: cost,
      at: now,
    });
    if (held.taskId !== params.task_id) throw refuse('committed');
  };
}

/** The -33005 refusal of an escrow, with its reason. */
function escrowRefusal(escrowId: string, reason: EscrowRefusal): AcmpError {
  return new AcmpError(ACMP_CODE.escrowInvalid, { reason, escrow_id: escrowId });
}

/** The escrow's status at the agent; the agent's refusals and failures become -33005 refusals. */
async function readStatus(
  from: { agent: () => Promise<EscrowClient>; logger: Logger },
  escrowId: string,
  signal: AbortSignal,
): Promise<EscrowStatus> {
  const { logger } = from;
  const refuse = (reason: EscrowRefusal): AcmpError => escrowRefusal(escrowId, reason);
  try {
    return await (await from.agent()).status(escrowId, { signal });
  } catch (error) {
    // L4 §4.7: only the buyer and the bound payee may read status, so -35005 means "not bound to us".
    if (isAcmpError(error, -35001)) throw refuse('unknown');
    if (isAcmpError(error, -35005)) throw refuse('not_bound_to_provider');
    logger.warn('escrow.verify_failed', { escrow_id: escrowId, ...errorFields(error) });
    throw refuse('agent_unavailable');
  }
}

function nanoOf(cu: unknown): bigint {
  const parsed = typeof cu === 'number' ? parseCu(cu) : undefined;
  if (!parsed?.ok) throw new AcmpError(ACMP_CODE.escrowInvalid, { reason: 'insufficient' });
  return parsed.nano;
}
