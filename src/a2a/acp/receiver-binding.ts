import type { AgentExtension, AgentSkill, Message, StreamResponse } from '@a2a-js/sdk';
import {
  ACP_EXTENSION_URI,
  ACP_MEDIA_TYPE,
  ACP_PART_KEYS,
  ACP_SCHEMA_PATH,
  ACP_VERSION,
  type Kind,
} from '../../acpspec/constants.js';
import { toAcpErrorObject } from '../../acpspec/errors.js';
import type { AcpReceiver } from '../../acpspec/receiver.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { isJsonObject } from '../../shared/json.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { TRACE_ATTR, failActiveSpan } from '../../shared/tracing.js';
import type { A2ABinding, BindingCall } from '../binding.js';
import { callerIdentity } from '../caller.js';
import type { InboundMessage } from '../part-codec.js';
import { acpAgentMessage, carriesAcp, readAcpMessage } from './codec.js';

export interface AcpBindingOptions {
  receiver: AcpReceiver;
  accepts: readonly Kind[];
  emits: readonly Kind[];
  /** Whether the host's interface is TLS (personal data travels only over TLS). */
  secure: boolean;
  /** The host's base URL, for the card's resolvable `schema_url`. */
  baseUrl: () => string;
  ids?: IdSource;
  logger?: Logger;
}

/**
 * ACPspec over A2A, receiving side (seed "One Envelope, One DataPart"): each message carries one
 * envelope (or the state request) in one data part; the reply is an agent message with one data part —
 * `{acp_ack}`, `{acp_error}`, or for a state request the snapshot envelope itself (never a delta).
 * Plain A2A messages, no task: the envelope is the unit of delivery. The extension need not be activated:
 * unlike ACMP, the binding bends no A2A rule, and the envelope is self-describing; it is echoed when asked.
 */
export function createAcpBinding(options: AcpBindingOptions): A2ABinding {
  return new AcpBinding(options, options.ids ?? systemIds, options.logger ?? silentLogger);
}

/** The receiving side of ACPspec over A2A; see {@link createAcpBinding}. */
class AcpBinding implements A2ABinding {
  readonly id = 'acpspec';
  readonly skills: readonly AgentSkill[] = [
    {
      id: 'acpspec-transaction-state',
      name: 'Automotive transaction state (ACPspec)',
      description:
        'Receives ACPspec snapshot and delta envelopes and answers state requests with a snapshot.',
      tags: ['acpspec', 'automotive', 'transaction-state'],
      examples: [],
      inputModes: [ACP_MEDIA_TYPE],
      outputModes: [ACP_MEDIA_TYPE],
      securityRequirements: [],
    },
  ];
  private cachedExtension: { url: string; extension: AgentExtension } | undefined;

  constructor(
    private readonly options: AcpBindingOptions,
    private readonly ids: IdSource,
    private readonly logger: Logger,
  ) {}

  get extension(): AgentExtension {
    const url = this.options.baseUrl();
    if (this.cachedExtension?.url !== url) {
      this.cachedExtension = {
        url,
        extension: {
          uri: ACP_EXTENSION_URI,
          description: 'ACPspec transaction envelopes over A2A (one envelope, one data part)',
          required: false,
          // Seed "Declaring Support": acp_version, a resolvable schema_url, non-empty accepts and emits.
          params: {
            acp_version: ACP_VERSION,
            schema_url: url + ACP_SCHEMA_PATH,
            accepts: [...this.options.accepts],
            emits: [...this.options.emits],
          },
        },
      };
    }
    return this.cachedExtension.extension;
  }

  claims(message: InboundMessage): boolean {
    return carriesAcp(message);
  }

  sendMessage(call: BindingCall): Promise<Message> {
    return this.reply(call);
  }

  async *sendMessageStream(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined> {
    yield { payload: { $case: 'message', value: await this.reply(call) } };
  }

  private async reply(call: BindingCall): Promise<Message> {
    const secure = this.options.secure;
    let envelopeId: string | undefined;
    try {
      const inbound = readAcpMessage(call.message);
      if (inbound.kind === 'state-request') {
        const { envelope } = await this.options.receiver.state(inbound.transactionId, {
          caller: callerIdentity(call.context),
        });
        return acpAgentMessage(envelope, this.ids.newId('msg'));
      }
      const raw = inbound.envelope;
      envelopeId = isJsonObject(raw) && typeof raw.envelope_id === 'string' ? raw.envelope_id : undefined;
      const ack = await this.options.receiver.ingest(inbound.envelope, {
        secure,
        caller: callerIdentity(call.context),
      });
      return acpAgentMessage({ [ACP_PART_KEYS.ack]: ack }, this.ids.newId('msg'));
    } catch (error) {
      const object = toAcpErrorObject(error, envelopeId ? { envelope_id: envelopeId } : undefined);
      if (object.code === 'ACP_INTERNAL') this.logger.error('acp.a2a.internal_error', errorFields(error));
      failActiveSpan({ [TRACE_ATTR.acpErrorCode]: object.code });
      return acpAgentMessage({ [ACP_PART_KEYS.error]: object }, this.ids.newId('msg'));
    }
  }
}
