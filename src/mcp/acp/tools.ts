import type { CallToolResult, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ACP_MCP_URIS, ACP_PART_KEYS, ACP_VERSION } from '../../acpspec/constants.js';
import { buildDelta, newEnvelopeId, type PatchOperation, type Producer } from '../../acpspec/envelope.js';
import { AcpError } from '../../acpspec/errors.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import { isoTime, type Clock } from '../../shared/clock.js';
import { isJsonObject } from '../../shared/json.js';
import type { Logger } from '../../shared/logger.js';
import type { McpCall } from '../contribution.js';
import { RESOURCE_PAGE_SIZE } from './resources.js';
import { toolError, toolResult } from './results.js';

/** What the tools of one instance need. */
export interface AcpToolDeps {
  receiver: AcpReceiver;
  /** Whether the channel counts as TLS for personal data (docs/acpspec-mcp.md "Personal data and TLS"). */
  secure: boolean;
  /** The role of the default producer (`{agent_id: <caller>, role}`). */
  producerRole: string;
  clock: Clock;
  logger: Logger;
}

const TransactionId = z.string().describe('The transaction id (letters, digits and . _ : -, at most 128)');
const ProducerInput = z
  .object({ agent_id: z.string(), role: z.string(), organization: z.string().optional() })
  .describe('Who produced the envelope; default: the caller, with the host role');
const PatchOperationInput = z.looseObject({
  op: z.string().describe('add, remove, replace or test (RFC 6902; no move or copy)'),
  path: z
    .string()
    .describe('A JSON Pointer rooted at one of the eight objects; events only as add /events/-'),
  value: z.unknown().optional().describe('Required for every op but remove'),
});
const AckOutput = z.object({
  acp_ack: z.object({ envelope_id: z.string(), transaction_id: z.string(), state_envelope_id: z.string() }),
});

// The tools' input schemas, built once: the factory registers the tools on a fresh server for every HTTP
// request, and building zod schemas there cost more than the call itself (docs/performance.md "MCP").
const DeltaInput = z.object({
  transaction_id: TransactionId,
  parent_envelope_id: z.string().describe('The envelope whose resulting state the patch applies to'),
  patch: z.array(PatchOperationInput).describe('The operations, applied in order, all or nothing'),
  envelope_id: z.string().optional().describe('urn:uuid:<UUIDv7>; give the same one to retry safely'),
  producer: ProducerInput.optional(),
});
const SnapshotInput = z.object({
  envelope: z.looseObject({ transaction_id: TransactionId }).describe('The snapshot envelope'),
});
const StateInput = z.object({ transaction_id: TransactionId });
const EventsInput = z.object({
  transaction_id: TransactionId,
  after: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).max(1000).optional(),
});
const ListInput = z.object({ after: z.string().optional().describe('The last transaction id seen') });

/**
 * The ACPspec tools of one MCP server instance (docs/acpspec-mcp.md "Tools"). Every write builds one
 * envelope and hands it to THE receiver, the one every binding uses: schema, version and kind, delta
 * policy, TLS for personal data, replay, owner, consent at the boundary, parent and patch, then the
 * append-only commit — all or nothing. A refusal is a tool error carrying `{acp_error}`.
 */
export class AcpTools {
  constructor(
    private readonly deps: AcpToolDeps,
    private readonly call: McpCall,
  ) {}

  register(mcp: McpServer): void {
    this.registerWrites(mcp);
    this.registerReads(mcp);
  }

  private registerWrites(mcp: McpServer): void {
    mcp.registerTool(
      'acp_apply_delta',
      {
        title: 'Apply a JSON Patch to a transaction',
        description:
          'Sends an ACPspec delta: an RFC 6902 patch over the state named by parent_envelope_id (the ' +
          "transaction's state_envelope_id from acp_request_state or the last ack). The receiver validates " +
          'the result and enforces consent; a refusal changes nothing. ACP_PARENT_UNKNOWN: read the state ' +
          'again (or send a snapshot) and patch that.',
        inputSchema: DeltaInput,
        outputSchema: AckOutput,
        annotations: { destructiveHint: false, idempotentHint: false },
      },
      (args) =>
        this.ingest(
          buildDelta(
            {
              transaction_id: args.transaction_id,
              parent_envelope_id: args.parent_envelope_id,
              patch: args.patch as PatchOperation[],
              producer: args.producer ?? this.producer(),
              ...(args.envelope_id === undefined ? {} : { envelope_id: args.envelope_id }),
            },
            { clock: this.deps.clock },
          ),
        ),
    );
    mcp.registerTool(
      'acp_submit_snapshot',
      {
        title: "Submit a transaction's complete state",
        description:
          'Sends an ACPspec snapshot envelope: the eight objects (transaction, parties, consent, vehicles, ' +
          'quote, financing, fulfillment, events) with transaction_id. Missing header fields are filled in ' +
          '(acp_version, a new envelope_id, produced_at now, the caller as producer). Held consent is never ' +
          'raised by an inbound envelope; held events are kept.',
        inputSchema: SnapshotInput,
        outputSchema: AckOutput,
      },
      (args) => this.submitSnapshot(args.envelope),
    );
  }

  private registerReads(mcp: McpServer): void {
    mcp.registerTool(
      'acp_request_state',
      {
        title: "Read a transaction's current state",
        description:
          'The state snapshot envelope (never a delta); its envelope_id is the parent for the next delta.',
        inputSchema: StateInput,
        annotations: { readOnlyHint: true },
      },
      (args) =>
        this.guarded(async () => {
          const { envelope, bytes } = await this.deps.receiver.state(args.transaction_id, this.caller());
          return toolResult({ ...envelope }, bytes.toString('utf8'));
        }),
    );
    mcp.registerTool(
      'acp_events',
      {
        title: "Read a transaction's event stream",
        description:
          'A page of events after the cursor `after` (a seq; 0 from the start); `next` continues it.',
        inputSchema: EventsInput,
        annotations: { readOnlyHint: true },
      },
      (args) =>
        this.guarded(async () => {
          const page = await this.deps.receiver.events(args.transaction_id, {
            ...this.caller(),
            ...(args.after === undefined ? {} : { after: args.after }),
            ...(args.limit === undefined ? {} : { limit: args.limit }),
          });
          return toolResult({ ...page });
        }),
    );
    mcp.registerTool(
      'acp_list_transactions',
      {
        title: 'List my transactions',
        description: `The caller's transactions in id order, ${RESOURCE_PAGE_SIZE} a page; pass next as after.`,
        inputSchema: ListInput,
        annotations: { readOnlyHint: true },
      },
      (args) =>
        this.guarded(async () => {
          const page = await this.deps.receiver.transactions({
            ...this.caller(),
            limit: RESOURCE_PAGE_SIZE,
            ...(args.after === undefined ? {} : { after: args.after }),
          });
          const transactions = page.transactions.map((t) => ({
            transaction_id: t.transactionId,
            uri: ACP_MCP_URIS.transaction(t.transactionId),
            state_envelope_id: t.stateEnvelopeId,
            updated_at: t.stateProducedAt,
          }));
          return toolResult({ transactions, ...(page.next === undefined ? {} : { next: page.next }) });
        }),
    );
  }

  /** A snapshot with its missing header fields filled in; a delta sent here is refused, not applied. */
  private submitSnapshot(envelope: Record<string, unknown>): Promise<CallToolResult> {
    if ('parent_envelope_id' in envelope || 'patch' in envelope) {
      const refusal = new AcpError('ACP_MESSAGE_NONCONFORMANT', 'a delta goes through acp_apply_delta');
      return Promise.resolve(toolError(refusal, { logger: this.deps.logger }));
    }
    return this.ingest({
      acp_version: ACP_VERSION,
      envelope_id: newEnvelopeId({ clock: this.deps.clock }),
      produced_at: isoTime(this.deps.clock),
      producer: this.producer(),
      ...envelope,
    });
  }

  /** One envelope through the receiver: `{acp_ack}`, or the tool error of its refusal. */
  private async ingest(envelope: Record<string, unknown> | object): Promise<CallToolResult> {
    const envelopeId = isJsonObject(envelope) ? envelope.envelope_id : undefined;
    try {
      const ack = await this.deps.receiver.ingest(envelope, { secure: this.deps.secure, ...this.caller() });
      return toolResult({ [ACP_PART_KEYS.ack]: ack });
    } catch (error) {
      const ids = typeof envelopeId === 'string' ? { envelope_id: envelopeId } : undefined;
      return toolError(error, { logger: this.deps.logger, ...(ids ? { ids } : {}) });
    }
  }

  private async guarded(read: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await read();
    } catch (error) {
      return toolError(error, { logger: this.deps.logger });
    }
  }

  private caller(): { caller: string } {
    return { caller: this.call.caller };
  }

  private producer(): Producer {
    return { agent_id: this.call.caller, role: this.deps.producerRole };
  }
}
