import type { Client } from '@a2a-js/sdk/client';
import { ACMP_EXTENSION_URI, L6_METHOD } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import {
  AckSchema,
  OfferSchema,
  type Ack,
  type AcceptParams,
  type Offer,
  type OfferRequestParams,
} from '../../acmp/wire/negotiation-messages.js';
import type { InvokeInput } from '../../acmp/buyer/buyer.js';
import type { SignatureCheck } from '../../acmp/buyer/signature-policy.js';
import { AcmpErrorObjectSchema } from '../../acmp/wire/messages.js';
import { type Payload } from '../../acmp/wire/task-messages.js';
import { LocalError } from '../../shared/errors.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { isJsonObject } from '../../shared/json.js';
import type { z } from 'zod';
import { encodeUserMessage } from '../part-codec.js';
import { acmpPart } from '../acmp-part.js';
import { decodeMessage } from '../part-codec.js';

/** An accepted offer, as the buyer holds it: what the invoke must carry to run under it. */
export interface NegotiatedAgreement {
  readonly offer: Offer;
  readonly ack: Ack;
  /** The negotiation task of session mode: the invoke names it in `referenceTaskIds`, in its context. */
  readonly session?: { readonly taskId: string; readonly contextId: string };
  /** The input the price was negotiated for (the invoke's default input). */
  readonly input?: Payload;
}

/** What the buyer asks for when it negotiates. */
export interface NegotiationRequest extends OfferRequestParams {
  /** The escrow to name at accept (L6 §2.2 RECOMMENDED); absent means direct settlement. */
  readonly escrow_id?: string;
}

/** The Layer 6 calls of a buyer over A2A (flat mode: direct messages, docs/acmp-negotiation.md). */
export interface AcmpNegotiationClient {
  quote(params: OfferRequestParams, options?: { signal?: AbortSignal }): Promise<Offer>;
  accept(params: AcceptParams, options?: { signal?: AbortSignal }): Promise<Ack>;
  /** Quote, check the offer against the request, accept it. */
  negotiate(request: NegotiationRequest, options?: { signal?: AbortSignal }): Promise<NegotiatedAgreement>;
}

const EXTENSIONS = { 'A2A-Extensions': ACMP_EXTENSION_URI };

/** The negotiation client over an SDK client. */
export function createAcmpNegotiationClient(
  client: Client,
  options: { ids?: IdSource; now?: () => number; signatures?: SignatureCheck } = {},
): AcmpNegotiationClient {
  return new A2ANegotiationClient(client, {
    ids: options.ids ?? systemIds,
    now: options.now ?? Date.now,
    signatures: options.signatures,
  });
}

/** Flat mode over A2A: each Layer 6 call is one direct message answered by one message. */
class A2ANegotiationClient implements AcmpNegotiationClient {
  constructor(
    private readonly client: Client,
    private readonly options: { ids: IdSource; now: () => number; signatures: SignatureCheck | undefined },
  ) {}

  /** Layer 7 §4.1: the offer as received must carry the provider DID's envelope (else -36003). */
  async quote(params: OfferRequestParams, o?: { signal?: AbortSignal }): Promise<Offer> {
    const offer = await this.call(L6_METHOD.offerRequest, params, { schema: OfferSchema, signal: o?.signal });
    await this.options.signatures?.check(offer, o?.signal ? { signal: o.signal } : {});
    return offer;
  }

  accept(params: AcceptParams, o?: { signal?: AbortSignal }): Promise<Ack> {
    return this.call(L6_METHOD.accept, params, { schema: AckSchema, signal: o?.signal });
  }

  async negotiate(request: NegotiationRequest, o?: { signal?: AbortSignal }): Promise<NegotiatedAgreement> {
    const { escrow_id: escrowId, ...params } = request;
    const offer = await this.quote(params, o);
    checkOffer(offer, params, this.options.now());
    const ack = await this.accept(
      { offer_id: offer.offer_id, ...(escrowId !== undefined ? { escrow_id: escrowId } : {}) },
      o,
    );
    if (ack.offer_id !== offer.offer_id || ack.price_cu !== offer.price_cu) {
      throw new AcmpError(ACMP_CODE.internal, {
        reason: 'protocol_violation',
        detail: 'the Ack does not match the offer',
      });
    }
    return { offer, ack };
  }

  /** Sends one request as a direct message and reads the reply with `reply.schema`. */
  private async call<T>(
    method: string,
    params: object,
    reply: { schema: z.ZodType<T>; signal: AbortSignal | undefined },
  ): Promise<T> {
    const message = encodeUserMessage({
      messageId: this.options.ids.newId('msg'),
      parts: [acmpPart({ acmp_method: method, params })],
      extensions: [ACMP_EXTENSION_URI],
    });
    const answer = await this.client.sendMessage(
      { tenant: '', message, configuration: undefined, metadata: undefined },
      { signal: reply.signal, serviceParameters: EXTENSIONS },
    );
    if ('id' in answer)
      throw new AcmpError(ACMP_CODE.internal, {
        reason: 'protocol_violation',
        detail: `${method} was answered with a task`,
      });
    return readReply(decodeMessage(answer).parts[0], reply.schema, method);
  }
}

/**
 * The invoke params that execute an agreement (L6 §4): its capability, the agreed price as the ceiling,
 * the agreed proof method, the escrow named at accept, and the offer id that links them (ours) — except
 * in session mode, where the negotiation task named in `referenceTaskIds` is the link.
 */
export function invokeUnder(
  agreement: NegotiatedAgreement,
  params: Omit<InvokeInput, 'capability'>,
): InvokeInput {
  const { offer, ack } = agreement;
  return {
    ...(agreement.input !== undefined ? { input: agreement.input } : {}),
    ...params,
    capability: offer.capability,
    max_price_cu: offer.price_cu,
    ...(offer.proof_method !== undefined ? { proof_method: offer.proof_method } : {}),
    ...(ack.escrow_id !== null ? { escrow_id: ack.escrow_id } : {}),
    ...(agreement.session === undefined ? { offer_id: offer.offer_id } : {}),
  };
}

/**
 * A buyer never accepts what it did not ask for (L6 §2.1: the price MUST be ≤ max_price_cu, the proof
 * method MUST be the requested one).
 * @throws AcmpError -33099 `protocol_violation` naming the term that is off.
 */
export function checkOffer(offer: Offer, asked: OfferRequestParams, now: number): void {
  const off = (term: string): AcmpError =>
    new AcmpError(ACMP_CODE.internal, { reason: 'protocol_violation', detail: `offer ${term}` });
  if (offer.capability !== asked.capability) throw off('capability differs');
  if (asked.max_price_cu !== undefined && offer.price_cu > asked.max_price_cu)
    throw off('price above max_price_cu');
  if (asked.proof_method !== undefined && offer.proof_method !== asked.proof_method)
    throw off('proof method differs');
  if (offer.valid_until_ms <= now) throw new AcmpError(ACMP_CODE.offerExpired, {});
}

/** The `{acmp_result}` of a direct reply, or its `{acmp_error}` thrown. */
export function readReply<T>(
  part: ReturnType<typeof decodeMessage>['parts'][number] | undefined,
  schema: z.ZodType<T>,
  method: string,
): T {
  const data = part?.kind === 'data' && isJsonObject(part.data) ? part.data : undefined;
  if (data && 'acmp_error' in data) {
    const error = AcmpErrorObjectSchema.safeParse(data.acmp_error);
    if (error.success)
      throw new AcmpError(error.data.code, isJsonObject(error.data.data) ? error.data.data : {});
  }
  const result = schema.safeParse(data?.acmp_result);
  if (!result.success)
    throw new LocalError('REFUSED', `the provider answered ${method} with something else than its result`);
  return result.data;
}
