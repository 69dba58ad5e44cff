import {
  ProtocolError,
  ProtocolErrorCode,
  type GetPromptResult,
  type McpServer,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ACP_MCP_URIS, ACP_MEDIA_TYPE } from '../../acpspec/constants.js';
import type { ConsentRecord, SnapshotEnvelope } from '../../acpspec/envelope.js';
import { isAcpError } from '../../acpspec/errors.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import type { McpCall } from '../contribution.js';

/** The prompt's name (docs/acpspec-mcp.md "Prompt"). */
const ACP_CONTEXT_PROMPT = 'acp_transaction_context';

/**
 * The rules a model must respect when it changes a transaction (seed 001 "Consent Survives the Hop",
 * design "Consent", "Deltas"): the receiver enforces each of them, the prompt says them first.
 */
const RULES = [
  'Change the transaction only through acp_apply_delta (a JSON Patch on the state named by parent_envelope_id) or acp_submit_snapshot.',
  'Consent is a lattice, most restrictive first: revoked < denied < unknown < limited < granted. You may lower a consent state; you can never raise one the receiver holds: it keeps its state and records a consent.conflict event.',
  "Personal data of a party (names, contact, addresses, vehicle owners, credit) is received only with that party's data_sharing consent of at least limited; credit data also needs credit consent. Otherwise the receiver refuses with ACP_CONSENT_REQUIRED and nothing changes.",
  'Do not put personal data in event data; reference parties by id.',
  'The event stream is append-only: add events with {"op": "add", "path": "/events/-"}; never edit or remove one.',
  'On ACP_PARENT_UNKNOWN or ACP_ENVELOPE_CONFLICT read the state again and patch the new state_envelope_id. A refused envelope is never partly applied.',
];

/** The prompt's arguments, built once (the prompt is registered on every request's server). */
const PromptArgs = z.object({ transaction_id: z.string().describe('The transaction to work on') });

/** Registers the prompt that frames one transaction's snapshot for a model. */
export function registerContextPrompt(mcp: McpServer, deps: { receiver: AcpReceiver; call: McpCall }): void {
  mcp.registerPrompt(
    ACP_CONTEXT_PROMPT,
    {
      title: 'Work on an ACPspec transaction',
      description: "The transaction's current state snapshot as context, with the consent rules to respect",
      argsSchema: PromptArgs,
    },
    async ({ transaction_id: transactionId }): Promise<GetPromptResult> => {
      let state: { envelope: SnapshotEnvelope; bytes: Buffer };
      try {
        state = await deps.receiver.state(transactionId, { caller: deps.call.caller });
      } catch (error) {
        const unknown = isAcpError(error, 'ACP_TRANSACTION_UNKNOWN');
        throw new ProtocolError(
          unknown ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError,
          unknown ? 'transaction is not known' : 'internal error',
        );
      }
      const uri = ACP_MCP_URIS.transaction(transactionId);
      return {
        description: `ACPspec transaction ${transactionId}`,
        messages: [
          {
            role: 'user',
            content: {
              type: 'resource',
              resource: { uri, mimeType: ACP_MEDIA_TYPE, text: state.bytes.toString('utf8') },
            },
          },
          { role: 'user', content: { type: 'text', text: framing(state.envelope) } },
        ],
      };
    },
  );
}

/** The framing text: which state this is, the consent the receiver holds (ids and states only), the rules. */
function framing(snapshot: SnapshotEnvelope): string {
  const held = Object.entries(snapshot.consent).map(
    ([party, scopes]) =>
      `${party}: ${Object.entries(scopes as Record<string, ConsentRecord>)
        .map(([scope, record]) => `${scope}=${record.state}`)
        .join(', ')}`,
  );
  return [
    `The resource above is the current state of ACPspec transaction ${snapshot.transaction_id} ` +
      `(stage ${snapshot.transaction.stage}). Its envelope_id ${snapshot.envelope_id} is the parent_envelope_id of your next delta.`,
    held.length > 0 ? `Consent held, per party: ${held.join('; ')}.` : 'No consent is held for any party.',
    'Rules:',
    ...RULES.map((rule, i) => `${i + 1}. ${rule}`),
  ].join('\n');
}
