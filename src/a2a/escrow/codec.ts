import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError, type AcmpErrorObject } from '../../acmp/wire/errors.js';
import { ESCROW_PROFILE_URI, isEscrowMethod, type EscrowMethod } from '../../acmp/escrow/constants.js';
import { EscrowParamsSchema, type EscrowParams } from '../../acmp/escrow/messages.js';
import { encodeStatus, type EscrowRecord } from '../../acmp/escrow/record.js';
import { isJsonObject, type JsonValue } from '../../shared/json.js';
import { acmpAgentMessage } from '../acmp-part.js';
import { partMediaType, type InboundMessage } from '../part-codec.js';

/** True for a message whose data part carries a Layer 4 request (the escrow binding's messages). */
export function isEscrowMessage(message: InboundMessage): boolean {
  return message.parts.some(
    (p) => p.kind === 'data' && isJsonObject(p.data) && isEscrowMethod(p.data.acmp_method),
  );
}

/**
 * Reads the one Layer 4 request of an A2A message, enveloped as the A2A binding carries every ACMP
 * message (binding §1): exactly one data part, media type `application/acmp+json` (or none from a v0.3
 * client), root exactly `{acmp_method, params}`.
 * @throws AcmpError -32600 for a malformed envelope, -32601 for a method the escrow agent does not serve.
 */
export function readEscrowRequest(
  message: InboundMessage,
  wireVersion: string,
): { method: EscrowMethod; params: EscrowParams } {
  const part = message.parts.length === 1 ? message.parts[0] : undefined;
  if (part?.kind !== 'data')
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'an ACMP message is exactly one data part' });
  const mediaType = partMediaType(part);
  if (mediaType !== ACMP_MEDIA_TYPE && !(mediaType === '' && wireVersion.startsWith('0.'))) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: `media type must be ${ACMP_MEDIA_TYPE}` });
  }
  const root = part.data;
  const params = isJsonObject(root) ? EscrowParamsSchema.safeParse(root.params) : undefined;
  if (!isJsonObject(root) || Object.keys(root).length !== 2 || !('acmp_method' in root) || !params?.success) {
    throw new AcmpError(ACMP_CODE.invalidRequest, { detail: 'root must be exactly {acmp_method, params}' });
  }
  if (!isEscrowMethod(root.acmp_method)) throw new AcmpError(ACMP_CODE.methodNotFound);
  return { method: root.acmp_method, params: params.data };
}

/** The agent message answering one request: `{acmp_result}` or `{acmp_error}` (binding §1), no task. */
export function escrowReply(
  answer: { kind: 'result'; result: Record<string, JsonValue> } | { kind: 'error'; error: AcmpErrorObject },
  messageId: string,
): Message {
  return acmpAgentMessage(
    answer.kind === 'result' ? { acmp_result: answer.result } : { acmp_error: answer.error },
    { messageId },
  );
}

/** The A2A state of an escrow's task: `working` until it closes, then `completed` (docs/acmp-escrow.md §4). */
export function escrowTaskState(record: EscrowRecord): TaskState {
  return record.state === 'closed' ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_WORKING;
}

/**
 * The status message of an escrow's task: the escrowStatus result [L4 §4.7] as `{acmp_result}`, with the
 * Layer 4 state and transition number in metadata under our profile URI. Its id derives from the
 * transition, so every read of one state agrees.
 */
export function escrowStatusMessage(record: EscrowRecord): Message {
  const message = acmpAgentMessage(
    { acmp_result: encodeStatus(record) },
    {
      messageId: `msg-${record.escrowId}-${record.seq}`,
      taskId: record.escrowId,
      contextId: record.contextId,
    },
  );
  return { ...message, metadata: { [ESCROW_PROFILE_URI]: { state: record.state, seq: record.seq } } };
}

/** An escrow as an A2A Task (id = escrow_id): the two parties can GetTask, ListTasks and subscribe to it. */
export function escrowTaskView(record: EscrowRecord): Task {
  const message = escrowStatusMessage(record);
  return {
    id: record.escrowId,
    contextId: record.contextId,
    status: { state: escrowTaskState(record), message, timestamp: new Date(record.updatedAt).toISOString() },
    artifacts: [],
    history: [message],
    metadata: undefined,
  };
}
