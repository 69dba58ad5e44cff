import { acpPart, acpReplyData } from '../../a2a/acp/codec.js';
import { createA2AClient, fetchAgentCard } from '../../a2a/client.js';
import { encodeUserMessage } from '../../a2a/part-codec.js';
import { ACP_EXTENSION_URI, ACP_PART_KEYS } from '../../acpspec/constants.js';
import type { ConformContext } from '../check.js';
import { clip } from './outcome.js';
import { classify, type AcpReply, type AcpWire } from './wire.js';

/** The SDK's card and part types, reached through the a2a layer (only src/a2a imports the SDK). */
type Card = Awaited<ReturnType<typeof fetchAgentCard>>;
type Client = Awaited<ReturnType<typeof createA2AClient>>;
/** One A2A part as the SDK sends it. */
export type WirePart = ReturnType<typeof acpPart>;
/** One interface of the card. */
export type CardInterface = Card['supportedInterfaces'][number];

const cards = new WeakMap<ConformContext, Promise<Card>>();

/** `promise`, or a rejection once `ms` have passed (the SDK's card resolver takes no signal). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** The agent's card as the SDK reads it (fetched once per context; the raw JSON is `ctx.card`). */
export function sdkCardOf(ctx: ConformContext): Promise<Card> {
  let card = cards.get(ctx);
  if (card === undefined) {
    const fetching = fetchAgentCard(ctx.url, ctx.caCert === undefined ? {} : { caCert: ctx.caCert });
    card = within(fetching, ctx.timeoutMs, 'fetching the agent card');
    cards.set(ctx, card);
  }
  return card;
}

/**
 * ACPspec over A2A through the SDK's real client, on the card's preferred interface or the one given:
 * each request is one message (seed 001 "One Envelope, One DataPart"); the reply's single data part is
 * read as an ack, an error or a state answer.
 */
export class A2aWire implements AcpWire {
  readonly name = 'a2a';

  private constructor(
    private readonly client: Client,
    private readonly timeoutMs: number,
  ) {}

  /** A wire on `only` (one interface of the card), or on the card's preferred interface. */
  static async open(ctx: ConformContext, only?: CardInterface): Promise<A2aWire> {
    const card = await sdkCardOf(ctx);
    const client = await createA2AClient(only ? { ...card, supportedInterfaces: [only] } : card, {
      ...(ctx.token === undefined ? {} : { token: ctx.token }),
      ...(ctx.caCert === undefined ? {} : { caCert: ctx.caCert }),
    });
    return new A2aWire(client, ctx.timeoutMs);
  }

  send(envelope: unknown): Promise<AcpReply> {
    return this.message([acpPart(envelope as object)]);
  }

  state(transactionId: string): Promise<AcpReply> {
    return this.message([acpPart({ [ACP_PART_KEYS.stateRequest]: { transaction_id: transactionId } })]);
  }

  /** Over A2A the stream is read from the state answer (the binding has no events request). */
  async events(transactionId: string): Promise<unknown[] | AcpReply> {
    const reply = await this.state(transactionId);
    if (reply.kind !== 'data') return reply;
    const events = reply.data['events'];
    return Array.isArray(events)
      ? events
      : { kind: 'other', evidence: 'the state answer has no events list' };
  }

  /** Sends one message of exactly these parts (and metadata), activating the extension as a client may. */
  async message(parts: WirePart[], metadata?: Record<string, unknown>): Promise<AcpReply> {
    const message = encodeUserMessage({
      messageId: crypto.randomUUID(),
      parts,
      extensions: [ACP_EXTENSION_URI],
    });
    let reply: Awaited<ReturnType<Client['sendMessage']>>;
    try {
      reply = await this.client.sendMessage(
        { tenant: '', message: { ...message, metadata }, configuration: undefined, metadata: undefined },
        {
          signal: AbortSignal.timeout(this.timeoutMs),
          serviceParameters: { 'A2A-Extensions': ACP_EXTENSION_URI },
        },
      );
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      return { kind: 'other', evidence: clip(`an A2A-level failure instead of an ACPspec reply: ${text}`) };
    }
    if (!('messageId' in reply)) return { kind: 'other', evidence: 'a Task instead of an agent Message' };
    const data = acpReplyData(reply);
    return data === undefined
      ? { kind: 'other', evidence: 'a reply that is not exactly one data part holding a JSON object' }
      : classify(data);
  }
}
