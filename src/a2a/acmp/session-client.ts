import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import {
  ACMP_EXTENSION_URI,
  L6_METHOD,
  SESSION_EXTENSION_URI,
  SESSION_METHOD,
} from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import {
  AckSchema,
  OfferSchema,
  type CounterOfferParams,
  type Offer,
} from '../../acmp/wire/negotiation-messages.js';
import { offerHash } from '../../acmp/negotiation/session.js';
import type { SignatureCheck } from '../../acmp/buyer/signature-policy.js';
import { LocalError } from '../../shared/errors.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import { isJsonObject } from '../../shared/json.js';
import { decodeMessage, encodeUserMessage } from '../part-codec.js';
import { acmpPart } from '../acmp-part.js';
import {
  checkOffer,
  readReply,
  type NegotiatedAgreement,
  type NegotiationRequest,
} from './negotiation-client.js';

/** The terms a buyer proposes instead of the standing offer (`acmp/counterOffer` without its `offer_id`). */
export type CounterTerms = Omit<CounterOfferParams, 'offer_id'>;

/** Where the negotiation stands when the buyer decides about an offer. */
export interface OfferContext {
  readonly round: number;
  readonly maxRounds: number;
  /** No counter is possible any more: accept or walk away. */
  readonly final: boolean;
  /** The provider declined the last counter and restated its offer. */
  readonly declined: boolean;
}

/**
 * The buyer's answer to an offer: counter terms, `'accept'` (also what `undefined` means) or `'reject'`
 * (the session is canceled and the negotiation fails). Counter terms on a final offer (no counter left)
 * accept it; the request's `max_price_cu` stays the buyer's limit either way.
 */
export type CounterDecision = CounterTerms | 'accept' | 'reject' | undefined;

/** Decides about each offer of a session. */
export type Counter = (offer: Offer, context: OfferContext) => CounterDecision | Promise<CounterDecision>;

/** How {@link negotiateInSession} reaches the provider and answers its offers. */
export interface SessionClientOptions {
  /** Decides about each offer; without it the first offer is accepted. */
  readonly counter?: Counter;
  /** The session extension's URI (default {@link SESSION_EXTENSION_URI}). */
  readonly uri?: string;
  readonly ids?: IdSource;
  /** Layer 7 §4.1: each offer must carry the provider DID's envelope (checked before it is answered). */
  readonly signatures?: SignatureCheck;
  readonly now?: () => number;
  readonly signal?: AbortSignal;
}

/**
 * Session mode, buyer side (docs/acmp-negotiation.md "Session mode"): opens a session with
 * `acmp/offerRequest`, lets `counter` answer each offer, then accepts (binding the acceptance to the offer
 * with `offer_hash`). The offer accepted is checked against the request like a flat one; a session the
 * buyer leaves is canceled rather than left to expire.
 * @throws AcmpError the provider's refusals; the code a session ended with before the acceptance (-34002
 *   at expiry); -33099 `protocol_violation`; LocalError `ABORTED` when `counter` rejected the offer.
 */
export async function negotiateInSession(
  client: Client,
  request: NegotiationRequest,
  options: SessionClientOptions = {},
): Promise<NegotiatedAgreement> {
  const { counter } = options;
  const session = new SessionCalls(client, options);
  const now = options.now ?? Date.now;
  const { escrow_id: escrowId, ...params } = request;
  let task = await session.send(L6_METHOD.offerRequest, params);
  for (;;) {
    const { offer, context } = standing(task, session.uri);
    // Layer 7 §4.1: an offer not signed by the provider's DID is not answered; the session is left.
    await options.signatures?.check(offer).catch(async (error: unknown) => {
      await session.cancel(task);
      throw error;
    });
    const decision = counter ? ((await counter(offer, context)) ?? 'accept') : 'accept';
    // A final offer cannot be countered: counter terms then mean "accept, within max_price_cu".
    if (typeof decision === 'object' && !context.final) {
      task = await session.send(
        SESSION_METHOD.counterOffer,
        { ...decision, offer_id: offer.offer_id },
        { task },
      );
      continue;
    }
    const problem =
      decision === 'reject'
        ? new LocalError('ABORTED', 'the buyer rejected the offer')
        : offerProblem(offer, params, now());
    if (problem) {
      await session.cancel(task);
      throw problem;
    }
    const accepted = { offer_id: offer.offer_id, ...(escrowId !== undefined ? { escrow_id: escrowId } : {}) };
    const done = await session.send(L6_METHOD.accept, accepted, {
      task,
      metadata: { offer_hash: offerHash(offer) },
    });
    const ack = AckSchema.safeParse(resultOf(done));
    if (
      done.status?.state !== TaskState.TASK_STATE_COMPLETED ||
      !ack.success ||
      ack.data.offer_id !== offer.offer_id ||
      ack.data.price_cu !== offer.price_cu
    ) {
      throw violation('the acceptance did not complete the session with the Ack');
    }
    return { offer, ack: ack.data, session: { taskId: done.id, contextId: done.contextId } };
  }
}

/** The calls of one session: messages with both extensions activated, and its cancel. */
class SessionCalls {
  readonly uri: string;
  private readonly ids: IdSource;
  private readonly callOptions: {
    signal: AbortSignal | undefined;
    serviceParameters: Record<string, string>;
  };

  constructor(
    private readonly client: Client,
    options: SessionClientOptions,
  ) {
    this.uri = options.uri ?? SESSION_EXTENSION_URI;
    this.ids = options.ids ?? systemIds;
    this.callOptions = {
      signal: options.signal,
      serviceParameters: { 'A2A-Extensions': `${ACMP_EXTENSION_URI}, ${this.uri}` },
    };
  }

  /**
   * Sends one request (on the session task when `on` is given, with our extension's `metadata`); a refusal
   * is thrown as its AcmpError.
   */
  async send(
    method: string,
    params: object,
    on?: { task: Task; metadata?: Record<string, unknown> },
  ): Promise<Task> {
    const task = on?.task;
    const metadata = on?.metadata;
    const message = {
      ...encodeUserMessage({
        messageId: this.ids.newId('msg'),
        parts: [acmpPart({ acmp_method: method, params })],
        extensions: [ACMP_EXTENSION_URI, this.uri],
        ...(task ? { taskId: task.id, contextId: task.contextId } : {}),
      }),
      metadata: metadata && { [this.uri]: metadata },
    };
    let reply: Message | Task;
    try {
      reply = await this.client.sendMessage(
        { tenant: '', message, configuration: undefined, metadata: undefined },
        this.callOptions,
      );
    } catch (error) {
      // A2A -32004: the session ended meanwhile (expired or canceled); its status says how.
      if (task && error instanceof UnsupportedOperationError)
        throw endOf(
          await this.client.getTask({ tenant: '', id: task.id, historyLength: 0 }, this.callOptions),
        );
      throw error;
    }
    if ('id' in reply) return reply;
    readReply(decodeMessage(reply).parts[0], OfferSchema, method);
    throw violation(`${method} was answered with a message`);
  }

  /** Best effort: a session left behind would only expire later. */
  async cancel(task: Task): Promise<void> {
    await this.client
      .cancelTask({ tenant: '', id: task.id, metadata: undefined }, this.callOptions)
      .catch(() => undefined);
  }
}

function violation(detail: string): AcmpError {
  return new AcmpError(ACMP_CODE.internal, { reason: 'protocol_violation', detail });
}

/** Why the buyer cannot accept an offer (it does not match the request), if it cannot. */
function offerProblem(offer: Offer, request: NegotiationRequest, now: number): Error | undefined {
  try {
    checkOffer(offer, request, now);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : violation('offer check failed');
  }
}

/** The standing offer of a session task in INPUT_REQUIRED, checked against its `offer_hash`. */
function standing(task: Task, uri: string): { offer: Offer; context: OfferContext } {
  if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED)
    throw violation('the session does not wait for the buyer');
  const offer = OfferSchema.safeParse(resultOf(task));
  const meta: unknown = task.status.message?.metadata?.[uri];
  if (!offer.success || !isJsonObject(meta)) throw violation('the session shows no offer');
  if (meta.offer_hash !== offerHash(offer.data)) throw violation('offer_hash does not match the offer');
  const round = typeof meta.round === 'number' ? meta.round : 1;
  const maxRounds = typeof meta.max_rounds === 'number' ? meta.max_rounds : round;
  return {
    offer: offer.data,
    context: {
      round,
      maxRounds,
      final: meta.final === true || round >= maxRounds,
      declined: meta.counter === 'declined',
    },
  };
}

function resultOf(task: Task): unknown {
  const part = task.status?.message ? decodeMessage(task.status.message).parts[0] : undefined;
  return part?.kind === 'data' && isJsonObject(part.data) ? part.data.acmp_result : undefined;
}

/** The error a finished session ended with (its `{acmp_error}`), or -34002 when it shows none. */
function endOf(task: Task): AcmpError {
  const part = task.status?.message ? decodeMessage(task.status.message).parts[0] : undefined;
  const error =
    part?.kind === 'data' && isJsonObject(part.data) && isJsonObject(part.data.acmp_error)
      ? part.data.acmp_error
      : undefined;
  const code = typeof error?.code === 'number' ? error.code : ACMP_CODE.offerExpired;
  return new AcmpError(
    code,
    isJsonObject(error?.data)
      ? error.data
      : { reason: task.status?.state === TaskState.TASK_STATE_CANCELED ? 'canceled' : 'ended' },
  );
}
