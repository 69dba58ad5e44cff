import { TaskState, type Message, type Task, type TaskStatus } from '@a2a-js/sdk';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import { encodeErrorRoot } from '../../acmp/wire/messages.js';
import {
  offerHash,
  type NegotiationSession,
  type SessionPhase,
  type SessionReply,
} from '../../acmp/negotiation/session.js';
import { acmpAgentMessage } from '../acmp-part.js';
import { decodeRequest } from '../acmp-part.js';

/** The A2A state of a session phase (docs/acmp-negotiation.md "State machine"): the offer waits for the buyer in INPUT_REQUIRED. */
function sessionState(phase: SessionPhase): TaskState {
  switch (phase) {
    case 'offer':
      return TaskState.TASK_STATE_INPUT_REQUIRED;
    case 'quoting':
    case 'accepting':
      return TaskState.TASK_STATE_WORKING;
    case 'accepted':
    case 'expired':
      return TaskState.TASK_STATE_COMPLETED;
    case 'canceled':
      return TaskState.TASK_STATE_CANCELED;
  }
}

/** The session phases an A2A state filter selects (ListTasks). */
export function phasesOf(state: TaskState): SessionPhase[] {
  const all: SessionPhase[] = ['quoting', 'offer', 'accepting', 'accepted', 'expired', 'canceled'];
  return all.filter((phase) => sessionState(phase) === state);
}

/**
 * The A2A Task of a session, derived from its record alone (every host shows the same bytes): history
 * alternates the buyer's messages and the provider's answers (deterministic ids `msg-<task>-<n>`), closed
 * by the expiry's `{acmp_error -34002}`; `status.message` is the latest answer while an offer stands or
 * once the session ended (none while the provider is working, none after a cancel). Our extension's
 * metadata (`phase`, `round`, …) tells a generic client that the INPUT_REQUIRED is an ACMP offer, not a
 * question for a human (docs/acmp-negotiation.md "Session mode").
 */
export function sessionTaskView(session: NegotiationSession, uri: string): Task {
  const history: Message[] = [];
  let latest: Message | undefined;
  session.turns.forEach((turn, index) => {
    const request = decodeRequest(turn.request);
    if (request) history.push(request);
    if (turn.reply) history.push((latest = replyMessage(session, { reply: turn.reply, index }, uri)));
  });
  if (session.end?.kind === 'expired') {
    const error = new AcmpError(ACMP_CODE.offerExpired, {
      offer_id: session.end.offerId,
      reason: session.end.reason,
    }).toObject();
    latest = withSession(
      acmpAgentMessage(encodeErrorRoot(error), {
        messageId: `msg-${session.id}-end`,
        taskId: session.id,
        contextId: session.contextId,
      }),
      uri,
      { phase: 'expired' },
    );
    history.push(latest);
  }
  const shown = session.phase === 'offer' || session.phase === 'accepted' || session.phase === 'expired';
  const status: TaskStatus = {
    state: sessionState(session.phase),
    message: shown ? latest : undefined,
    timestamp: new Date(session.updatedAt).toISOString(),
  };
  return {
    id: session.id,
    contextId: session.contextId,
    status,
    artifacts: [],
    history,
    metadata: { [uri]: { phase: session.phase, round: session.round, max_rounds: session.maxRounds } },
  };
}

/** The provider's answer in turn `index` of a session, as a history message. */
function replyMessage(
  session: NegotiationSession,
  { reply, index }: { reply: SessionReply; index: number },
  uri: string,
): Message {
  const id = `msg-${session.id}-${index}`;
  const onTask = { taskId: session.id, contextId: session.contextId };
  if (reply.kind === 'ack') {
    const message = acmpAgentMessage({ acmp_result: reply.ack }, { messageId: id, ...onTask });
    return withSession(message, uri, {
      phase: 'accepted',
      agreement: { invoke_by_ms: reply.invokeByMs, terms_hash: reply.termsHash },
    });
  }
  const message = acmpAgentMessage({ acmp_result: reply.offer }, { messageId: id, ...onTask });
  return withSession(message, uri, {
    phase: 'offer',
    round: reply.round,
    max_rounds: session.maxRounds,
    final: reply.round >= session.maxRounds,
    offer_hash: offerHash(reply.offer),
    session_expires_ms: session.expiresAt,
    ...(reply.supersedes !== undefined ? { supersedes: reply.supersedes } : {}),
    ...(reply.declined === true ? { counter: 'declined' } : {}),
  });
}

function withSession(message: Message, uri: string, metadata: Record<string, unknown>): Message {
  return { ...message, extensions: [uri], metadata: { [uri]: metadata } };
}
