import type { AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { InvokeInput } from '../../acmp/buyer/buyer.js';
import { L6_METHOD, SESSION_EXTENSION_URI } from '../../acmp/wire/constants.js';
import { ACMP_CODE, AcmpError } from '../../acmp/wire/errors.js';
import type { CapabilityObject } from '../../acmp/wire/messages.js';
import type { Payload } from '../../acmp/wire/task-messages.js';
import { estimateTokens } from '../../acmp/provider/provider-checks.js';
import type { SignatureCheck } from '../../acmp/buyer/signature-policy.js';
import type { IdSource } from '../../shared/ids.js';
import {
  invokeUnder,
  type AcmpNegotiationClient,
  type NegotiatedAgreement,
  type NegotiationRequest,
} from './negotiation-client.js';
import { negotiateInSession, type Counter } from './session-client.js';

/** An invoke that executes a negotiated agreement: the agreement supplies capability, price and proof. */
export type AgreementInvoke = Omit<InvokeInput, 'capability'> & { readonly agreement: NegotiatedAgreement };

/** What a buyer's `negotiate` asks for (docs/acmp-negotiation.md "Buyer"). */
export interface BuyerNegotiation extends NegotiationRequest {
  /**
   * `flat` (L6 exactly: quote, accept) or `session` (our extension: counters in one A2A task). Without a
   * mode, a `counter` picks session mode when the card advertises it, flat otherwise.
   */
  readonly mode?: 'flat' | 'session';
  /** Answers each offer of a session (counter terms, `'accept'`, `'reject'`). */
  readonly counter?: Counter;
  /** The input the invoke will carry: it sizes the quote (`input_tokens_est`) and the agreement keeps it. */
  readonly input?: Payload;
}

/** The provider a {@link createBuyerNegotiator} negotiates with, and how. */
export interface BuyerNegotiatorOptions {
  readonly client: Client;
  /** Its card: whether it advertises negotiation sessions. */
  readonly card: AgentCard;
  /** Its capability object: whether it accepts `acmp/offerRequest`. */
  readonly capabilityObject: CapabilityObject;
  /** Flat mode, and the fallback when no session is wanted or advertised. */
  readonly flat: AcmpNegotiationClient;
  readonly ids: IdSource;
  /** The session extension's URI (default {@link SESSION_EXTENSION_URI}). */
  readonly sessionUri?: string;
  /** Layer 7 §4.1: checks the envelope of every session offer (flat offers: the flat client's). */
  readonly signatures?: SignatureCheck;
}

/**
 * The negotiation of one buyer, in the mode the request and the card allow (A2A binding §2: never rely
 * on what the card does not advertise).
 * @throws AcmpError -32601 without `acmp/offerRequest` on the card; -33007 for `mode: 'session'` when the
 *   card does not advertise the session extension; the provider's refusals.
 */
export function createBuyerNegotiator(
  options: BuyerNegotiatorOptions,
): (request: BuyerNegotiation, o?: { signal?: AbortSignal }) => Promise<NegotiatedAgreement> {
  const { client, card, capabilityObject, flat } = options;
  const uri = options.sessionUri ?? SESSION_EXTENSION_URI;
  const advertised = card.capabilities?.extensions.some((e) => e.uri === uri) === true;
  return async (request, o) => {
    if (!capabilityObject.accepts.includes(L6_METHOD.offerRequest))
      throw new AcmpError(ACMP_CODE.methodNotFound, {
        detail: 'the provider does not advertise acmp/offerRequest',
      });
    const { mode, counter, input, ...asked } = request;
    if (mode === 'session' && !advertised)
      throw new AcmpError(ACMP_CODE.featureUnsupported, {
        detail: 'the provider does not advertise negotiation sessions',
      });
    const sized: NegotiationRequest =
      input !== undefined && asked.input_tokens_est === undefined
        ? { ...asked, input_tokens_est: estimateTokens(input) }
        : asked;
    const inSession = advertised && (mode === 'session' || (mode === undefined && counter !== undefined));
    const agreement = inSession
      ? await negotiateInSession(client, sized, {
          counter,
          uri,
          ids: options.ids,
          ...(options.signatures ? { signatures: options.signatures } : {}),
          ...(o?.signal ? { signal: o.signal } : {}),
        })
      : await flat.negotiate(sized, o);
    return input !== undefined ? { ...agreement, input } : agreement;
  };
}

/** How an invoke message links to a session: the negotiation task and its context. */
export interface InvokeLink {
  readonly contextId: string;
  readonly referenceTaskIds: readonly string[];
}

/**
 * The links of invokes under session agreements, by task id, while they run: the transport reads them to
 * put `referenceTaskIds` and the negotiation's `contextId` on the invoke message (docs/acmp-negotiation.md "From agreement to invoke").
 */
export class InvokeLinks {
  private readonly links = new Map<string, InvokeLink>();

  constructor(private readonly ids: IdSource) {}

  get(taskId: string): InvokeLink | undefined {
    return this.links.get(taskId);
  }

  /** The invoke params of a call (an agreement's filled in), its session link registered under its task id. */
  prepare(params: InvokeInput | AgreementInvoke): InvokeInput & { task_id?: string } {
    if (!('agreement' in params)) return params;
    const { agreement, ...rest } = params;
    const input = invokeUnder(agreement as NegotiatedAgreement, rest);
    const session = (agreement as NegotiatedAgreement).session;
    if (!session) return input;
    const taskId = input.task_id ?? this.ids.newId('task');
    this.links.set(taskId, { contextId: session.contextId, referenceTaskIds: [session.taskId] });
    return { ...input, task_id: taskId };
  }

  forget(taskId: string | undefined): void {
    if (taskId !== undefined) this.links.delete(taskId);
  }
}
