import type { AgentCard, StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError, isJsonRpcError, isRestError } from '@a2a-js/sdk/errors';
import { z } from 'zod';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import {
  ESCROW_AGENT_ROLE,
  ESCROW_METHOD,
  ESCROW_PROFILE_URI,
  type EscrowMethod,
} from '../../acmp/escrow/constants.js';
import { AcmpErrorObjectSchema } from '../../acmp/wire/messages.js';
import { LocalError } from '../../shared/errors.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { isJsonObject, type JsonValue } from '../../shared/json.js';
import { createA2AClient, fetchAgentCard, type A2AConnectOptions } from '../client.js';
import { decodeMessage, encodeDataPart, encodeUserMessage } from '../part-codec.js';

/** The escrowStatus object [L4 §4.7] as the client reads it (amounts in CU). */
export type EscrowStatus = Record<string, JsonValue> & z.infer<typeof EscrowStatusFieldsSchema>;

/** The fields of an escrowStatus [L4 §4.7] the client relies on; the rest stays JSON as the agent sent it. */
const EscrowStatusFieldsSchema = z.object({
  escrow_id: z.string(),
  state: z.string(),
  remaining_cu: z.number(),
});

/**
 * A JSON object as the client keeps it: the params of the card's escrow profile (docs/acmp-escrow.md §2
 * "Agent Card") and the `acmp_result` of a reply, whose fields each method's caller reads.
 */
const JsonObjectSchema = z.record(z.string(), z.json());

/** Options of {@link createEscrowClient}. */
export interface EscrowClientOptions extends A2AConnectOptions {
  card?: AgentCard;
  agentUrl?: string;
  ids?: IdSource;
  /** Deadline of each call (default 10 s): no escrow call waits forever (REF's client does). */
  timeoutMs?: number;
}

/** A party's connection to one escrow agent over A2A. Every mutating call takes an `op_ref` (L4 §3). */
export interface EscrowClient {
  readonly card: AgentCard;
  /** The agent's advertised profile settings (windows, dispute deadline and default). */
  readonly profile: Record<string, unknown>;
  /**
   * Sends one Layer 4 request and resolves with its result.
   * @throws AcmpError the agent's -35xxx / -326xx error; LocalError `REFUSED` for an A2A-level refusal.
   */
  call(
    method: EscrowMethod,
    params: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ): Promise<Record<string, JsonValue>>;
  status(escrowId: string, options?: { signal?: AbortSignal }): Promise<EscrowStatus>;
  /** The escrow's status after each transition (A2A SubscribeToTask on the escrow's task), until it closes. */
  watch(escrowId: string, options?: { signal?: AbortSignal }): AsyncIterable<EscrowStatus>;
}

/**
 * Connects to an escrow agent: reads its card (it must advertise the ACMP extension with role
 * `escrow-agent`, L4 §1) and returns a client whose calls travel as ACMP data parts over the SDK's client.
 * @throws AcmpError -33007 when the card advertises no escrow agent, or an escrow profile that is not an object.
 */
export async function createEscrowClient(options: EscrowClientOptions): Promise<EscrowClient> {
  const card = options.card ?? (await fetchAgentCard(requireUrl(options.agentUrl), options));
  const role = card.capabilities?.extensions.find(
    (e) => e.uri === ACMP_EXTENSION_URI && e.params?.role === ESCROW_AGENT_ROLE,
  );
  if (!role)
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      detail: 'the agent card advertises no ACMP escrow agent',
    });
  const profile = JsonObjectSchema.safeParse(
    card.capabilities?.extensions.find((e) => e.uri === ESCROW_PROFILE_URI)?.params ?? {},
  );
  if (!profile.success)
    throw new AcmpError(ACMP_CODE.featureUnsupported, {
      detail: 'the agent card’s escrow profile is not a JSON object',
    });
  const client = await createA2AClient(card, options);
  return new A2AEscrowClient({
    card,
    profile: profile.data,
    client,
    ids: options.ids ?? systemIds,
    timeoutMs: options.timeoutMs ?? 10_000,
  });
}

const SERVICE_PARAMETERS = { 'A2A-Extensions': ACMP_EXTENSION_URI };

class A2AEscrowClient implements EscrowClient {
  readonly card: AgentCard;
  readonly profile: Record<string, unknown>;
  private readonly client: Client;
  private readonly ids: IdSource;
  private readonly timeoutMs: number;

  constructor(options: {
    card: AgentCard;
    profile: Record<string, unknown>;
    client: Client;
    ids: IdSource;
    timeoutMs: number;
  }) {
    this.card = options.card;
    this.profile = options.profile;
    this.client = options.client;
    this.ids = options.ids;
    this.timeoutMs = options.timeoutMs;
  }

  async call(
    method: EscrowMethod,
    params: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<Record<string, JsonValue>> {
    const message = encodeUserMessage({
      messageId: this.ids.newId('msg'),
      parts: [encodeDataPart({ acmp_method: method, params }, ACMP_MEDIA_TYPE)],
      extensions: [ACMP_EXTENSION_URI],
    });
    const signal = AbortSignal.any([
      AbortSignal.timeout(this.timeoutMs),
      ...(options.signal ? [options.signal] : []),
    ]);
    let reply;
    try {
      reply = await this.client.sendMessage(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        { signal, serviceParameters: SERVICE_PARAMETERS },
      );
    } catch (error) {
      throw classify(error);
    }
    return resultOf('id' in reply ? undefined : reply);
  }

  async status(escrowId: string, options?: { signal?: AbortSignal }): Promise<EscrowStatus> {
    return decodeEscrowStatus(await this.call(ESCROW_METHOD.status, { escrow_id: escrowId }, options));
  }

  async *watch(escrowId: string, options: { signal?: AbortSignal } = {}): AsyncIterable<EscrowStatus> {
    try {
      for await (const event of this.client.resubscribeTask(
        { tenant: '', id: escrowId },
        { signal: options.signal, serviceParameters: SERVICE_PARAMETERS },
      )) {
        const status = statusOf(event);
        if (status) yield status;
      }
    } catch (error) {
      throw classify(error);
    }
  }
}

/** The `acmp_result` of a reply, or its `acmp_error` thrown. */
function resultOf(reply: Parameters<typeof decodeMessage>[0] | undefined): Record<string, JsonValue> {
  const part = reply ? decodeMessage(reply).parts[0] : undefined;
  const root = part?.kind === 'data' && isJsonObject(part.data) ? part.data : undefined;
  const result = JsonObjectSchema.safeParse(root?.acmp_result);
  if (result.success) return result.data;
  const error = AcmpErrorObjectSchema.safeParse(root?.acmp_error);
  if (error.success) throw AcmpError.fromObject(error.data);
  throw new AcmpError(ACMP_CODE.internal, { reason: 'escrow_reply_malformed' });
}

/**
 * An agent's escrowStatus reply decoded [L4 §4.7].
 * @throws AcmpError -33099 `escrow_status_malformed` when a field the client relies on is missing or mistyped.
 */
export function decodeEscrowStatus(result: Record<string, JsonValue>): EscrowStatus {
  const fields = EscrowStatusFieldsSchema.safeParse(result);
  if (!fields.success) throw new AcmpError(ACMP_CODE.internal, { reason: 'escrow_status_malformed' });
  return { ...result, ...fields.data };
}

function statusOf(event: StreamResponse): EscrowStatus | undefined {
  const payload = event.payload;
  const message =
    payload?.$case === 'task'
      ? payload.value.status?.message
      : payload?.$case === 'statusUpdate'
        ? payload.value.status?.message
        : undefined;
  if (!message) return undefined;
  try {
    return decodeEscrowStatus(resultOf(message));
  } catch {
    return undefined;
  }
}

function classify(error: unknown): unknown {
  if (error instanceof A2AError || isJsonRpcError(error) || isRestError(error)) {
    return new LocalError(
      'REFUSED',
      `the escrow agent refused the call: ${error instanceof Error ? error.message : 'refused'}`,
      { cause: error },
    );
  }
  return error;
}

function requireUrl(url: string | undefined): string {
  if (!url)
    throw new AcmpError(ACMP_CODE.invalidParams, {
      detail: 'createEscrowClient needs a card or an agentUrl',
    });
  return url;
}
