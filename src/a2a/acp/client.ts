import type { AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ACP_EXTENSION_URI, ACP_KINDS, ACP_PART_KEYS, type Kind } from '../../acpspec/constants.js';
import { AcpError, fromAcpErrorObject } from '../../acpspec/errors.js';
import type { AcpAck, Envelope } from '../../acpspec/envelope.js';
import { parseAck } from '../../acpspec/replies.js';
import {
  createAcpSenderCore,
  type AcpPeer,
  type AcpSenderCore,
  type AcpSenderCoreOptions,
  type AcpSenderTransport,
} from '../../acpspec/sender.js';
import { isJsonObject } from '../../shared/json.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { createA2AClient, fetchAgentCard, type A2AConnectOptions } from '../client.js';
import { interfaceUsesTls } from '../grpc-client.js';
import { encodeUserMessage } from '../part-codec.js';
import { acpPart, acpReplyData } from './codec.js';

export interface AcpClientOptions extends A2AConnectOptions {
  card?: AgentCard;
  agentUrl?: string;
  /** The kinds this agent emits (default both). */
  emits?: readonly Kind[];
  ids?: IdSource;
  /** The full state a delta produces, for the `ACP_PARENT_UNKNOWN` fallback (see the sender core). */
  snapshotFor?: AcpSenderCoreOptions['snapshotFor'];
}

/** An ACPspec sender connected to one receiver over A2A. */
export interface AcpClient extends AcpSenderCore {
  readonly peer: AcpPeer & { schema_url: string };
  readonly card: AgentCard;
}

/**
 * Reads the receiver's card params first (seed "Declaring Support"), then sends through the sender core:
 * it refuses kinds the receiver does not accept or this agent does not emit, refuses personal data to a
 * non-TLS endpoint, and recovers from `ACP_PARENT_UNKNOWN` with one snapshot.
 * @throws AcpError `ACP_KIND_NOT_ACCEPTED` when the card advertises no usable ACPspec extension.
 */
export async function createAcpClient(options: AcpClientOptions): Promise<AcpClient> {
  const card = options.card ?? (await fetchAgentCard(required(options.agentUrl), options));
  const peer = acpPeerOf(card);
  const client = await createA2AClient(card, options);
  // Personal data only over TLS: the channel counts as secure only when every interface is reached over
  // TLS (https, or a gRPC address dialled with TLS).
  const secure =
    card.supportedInterfaces.length > 0 &&
    card.supportedInterfaces.every((i) => interfaceUsesTls(card, i, options.grpcTls));
  const transport = createA2AAcpTransport(client, secure, options.ids ?? systemIds);
  const core = createAcpSenderCore({
    transport,
    peer,
    self: { emits: options.emits ?? ACP_KINDS },
    ...(options.snapshotFor ? { snapshotFor: options.snapshotFor } : {}),
  });
  return Object.assign(core, { peer, card });
}

function required(url: string | undefined): string {
  if (!url) throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'createAcpClient needs a card or an agentUrl');
  return url;
}

/**
 * The receiver's declaration from its card: `acp_version`, `schema_url`, and non-empty `accepts`/`emits`.
 * @throws AcpError `ACP_KIND_NOT_ACCEPTED` when missing or malformed.
 */
export function acpPeerOf(card: AgentCard): AcpPeer & { schema_url: string } {
  const params = card.capabilities?.extensions.find((e) => e.uri === ACP_EXTENSION_URI)?.params;
  const kinds = (v: unknown): Kind[] | undefined => {
    if (!Array.isArray(v) || v.length === 0) return undefined;
    const decoded = v.map((k) => ACP_KINDS.find((kind) => kind === k));
    return decoded.every((k) => k !== undefined) ? decoded : undefined;
  };
  const accepts = kinds(params?.accepts);
  const emits = kinds(params?.emits);
  if (
    !params ||
    typeof params.acp_version !== 'string' ||
    typeof params.schema_url !== 'string' ||
    !accepts ||
    !emits
  ) {
    throw new AcpError('ACP_KIND_NOT_ACCEPTED', 'the agent card advertises no usable ACPspec extension');
  }
  return { acp_version: params.acp_version, schema_url: params.schema_url, accepts, emits };
}

/** The sender core's transport over A2A: one envelope (or the state request) per message, one data part. */
function createA2AAcpTransport(
  client: Client,
  secure: boolean,
  ids: IdSource = systemIds,
): AcpSenderTransport {
  return new A2AAcpTransport(client, secure, ids);
}

/** The sender core's transport over A2A; see {@link createA2AAcpTransport}. */
class A2AAcpTransport implements AcpSenderTransport {
  constructor(
    private readonly client: Client,
    readonly secure: boolean,
    private readonly ids: IdSource,
  ) {}

  async send(envelope: Envelope): Promise<AcpAck> {
    const body = await this.call(envelope);
    const ack = body[ACP_PART_KEYS.ack];
    if (ack === undefined)
      throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered without an acp_ack');
    return parseAck(ack);
  }

  requestState(transactionId: string): Promise<Record<string, unknown>> {
    return this.call({ [ACP_PART_KEYS.stateRequest]: { transaction_id: transactionId } });
  }

  /** One message with one data part; the reply's ACPspec data, or its `acp_error` thrown. */
  private async call(data: object): Promise<Record<string, unknown>> {
    const reply = await this.client.sendMessage(
      {
        tenant: '',
        message: encodeUserMessage({
          messageId: this.ids.newId('msg'),
          parts: [acpPart(data)],
          extensions: [ACP_EXTENSION_URI],
        }),
        configuration: undefined,
        metadata: undefined,
      },
      { serviceParameters: { 'A2A-Extensions': ACP_EXTENSION_URI } },
    );
    const body = 'id' in reply ? undefined : acpReplyData(reply);
    if (!body)
      throw new AcpError('ACP_MESSAGE_NONCONFORMANT', 'the receiver answered without an ACPspec data part');
    const error = body[ACP_PART_KEYS.error];
    if (isJsonObject(error)) throw fromAcpErrorObject(error);
    return body;
  }
}
