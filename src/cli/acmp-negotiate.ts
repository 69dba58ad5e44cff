import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  createAcmpBuyer,
  type AcmpBuyer,
  type AgreementInvoke,
  type BuyerNegotiation,
} from '../a2a/acmp/buyer.js';
import { negotiateBest } from '../a2a/acmp/fan-out.js';
import type { NegotiatedAgreement } from '../a2a/acmp/negotiation-client.js';
import type { CounterDecision } from '../a2a/acmp/session-client.js';
import { AcmpError, acmpErrorSpec } from '../acmp/wire/errors.js';
import { PayloadSchema, type Payload } from '../acmp/wire/task-messages.js';
import { AckSchema, OfferSchema, type Offer } from '../acmp/wire/negotiation-messages.js';
import { estimateTokens } from '../acmp/provider/provider-checks.js';
import { LocalError } from '../shared/errors.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { walletFromFlags } from './wallet.js';
import type { Wallet } from '../wallet/wallet.js';
import { UsageError, type CliIo } from './io.js';

export const NEGOTIATE_USAGE = `  a2a-commerce acmp quote <agent-url> --capability <id> [--max-price <cu>] [--input <text>]
      [--input-type text|json] [--proof result-hash] [--valid-ms <ms>] [--token <t>] [--data-dir <dir> | --ca <pem>]
  a2a-commerce acmp negotiate <agent-url>... --capability <id> --max-price <cu> [--input <text>]
      [--input-type text|json] [--proof result-hash] [--escrow <id>] [--session] [--counter-price <cu>]
      [--deadline-ms <ms>] [--out <file>] [--token <t>] [--data-dir <dir> | --ca <pem>]
      [--wallet-limits <file>]  (accept only what the operator's wallet allows, docs/acmp-wallet.md)

quote         asks one provider for an offer (ACMP Layer 6, flat: nothing is stored) and prints it.
negotiate     agrees on a price (docs/acmp-negotiation.md) and prints the agreement JSON (to --out too):
              one agent-url: flat, or in a session with --session or --counter-price (the buyer counters
              with that price until the provider's last offer); several: quotes all within --deadline-ms
              and accepts the cheapest valid offer. Run it with "acmp invoke <url> --agreement <file>".`;

const CONNECT = {
  token: { type: 'string' },
  'data-dir': { type: 'string' },
  ca: { type: 'string' },
} as const;
const TERMS = {
  ...CONNECT,
  capability: { type: 'string' },
  'max-price': { type: 'string' },
  input: { type: 'string' },
  'input-type': { type: 'string', default: 'text' },
  proof: { type: 'string' },
  'valid-ms': { type: 'string' },
} as const;
const NEGOTIATE = {
  ...TERMS,
  escrow: { type: 'string' },
  session: { type: 'boolean' },
  'counter-price': { type: 'string' },
  'deadline-ms': { type: 'string' },
  out: { type: 'string' },
  'wallet-limits': { type: 'string' },
} as const;

/** The agreement file `acmp negotiate` writes and `acmp invoke --agreement` reads. */
const AgreementFileSchema = z.object({
  agent_url: z.string(),
  offer: OfferSchema,
  ack: AckSchema,
  session: z.object({ taskId: z.string(), contextId: z.string() }).optional(),
  input: PayloadSchema.optional(),
});

/** `a2a-commerce acmp quote …`. */
export async function quote(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: TERMS, allowPositionals: true });
  const url = oneUrl(positionals);
  const request = termsFromFlags(values);
  const { input, ...params } = request;
  const buyer = await connect(url, values, io);
  return reported(io, async () => {
    const estimate =
      input !== undefined && params.input_tokens_est === undefined
        ? { input_tokens_est: estimateTokens(input) }
        : {};
    io.out(JSON.stringify(await buyer.quote({ ...params, ...estimate }), null, 2));
  });
}

/** `a2a-commerce acmp negotiate …`. */
export async function negotiate(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: NEGOTIATE, allowPositionals: true });
  const targets = urls(positionals);
  const request: BuyerNegotiation = {
    ...termsFromFlags(values),
    ...(values.escrow !== undefined ? { escrow_id: values.escrow } : {}),
  };
  if (request.max_price_cu === undefined) throw new UsageError('negotiate needs --max-price');
  const counterPrice =
    values['counter-price'] === undefined ? undefined : cu(values['counter-price'], '--counter-price');
  // With the operator's wallet every acceptance is checked against its limits first (docs/acmp-wallet.md).
  const open = await walletFromFlags(values, io.env);
  try {
    return await agree(targets, { values, request, counterPrice, wallet: open?.wallet }, io);
  } finally {
    await open?.close();
  }
}

async function agree(
  targets: string[],
  how: {
    values: ReturnType<typeof parseArgs<{ options: typeof NEGOTIATE; allowPositionals: true }>>['values'];
    request: BuyerNegotiation;
    counterPrice: number | undefined;
    wallet: Wallet | undefined;
  },
  io: CliIo,
): Promise<number> {
  const { values, request, counterPrice } = how;
  const connected = await Promise.all(
    targets.map(async (url): Promise<Connected> => ({
      url,
      buyer: await connect(url, { ...values, wallet: how.wallet }, io),
    })),
  );
  return reported(io, async () => {
    const [only, ...others] = connected;
    const chosen =
      only !== undefined && others.length === 0
        ? await negotiateWithOne(only, request, { session: values.session === true, counterPrice })
        : await negotiateWithBest(connected, request, { deadlineMs: values['deadline-ms'], io });
    const file = { agent_url: chosen.url, ...chosen.agreement };
    const text = JSON.stringify(file, null, 2);
    if (values.out !== undefined) writeFileSync(values.out, text + '\n', { mode: 0o600 });
    io.out(text);
    io.err(
      `agreed: ${chosen.agreement.ack.price_cu} CU for ${chosen.agreement.offer.capability}${chosen.agreement.session ? ` (session ${chosen.agreement.session.taskId})` : ''}`,
    );
  });
}

/** A provider the buyer is connected to, with the URL it was given as. */
interface Connected {
  url: string;
  buyer: AcmpBuyer;
}

/** An agreement and the URL of the provider that made it. */
interface Chosen {
  url: string;
  agreement: NegotiatedAgreement;
}

/** One provider: flat, or in a session when asked for or when the buyer counters (`--counter-price`). */
async function negotiateWithOne(
  { url, buyer }: Connected,
  request: BuyerNegotiation,
  options: { session: boolean; counterPrice: number | undefined },
): Promise<Chosen> {
  const { counterPrice } = options;
  const counter =
    counterPrice === undefined
      ? undefined
      : (offer: Offer): CounterDecision =>
          offer.price_cu > counterPrice ? { price_cu: counterPrice } : 'accept';
  const mode = options.session || counter !== undefined ? 'session' : 'flat';
  return { url, agreement: await buyer.negotiate({ ...request, mode, ...(counter ? { counter } : {}) }) };
}

/** Several providers: quotes all within `--deadline-ms`, accepts the cheapest valid offer, lists the quotes. */
async function negotiateWithBest(
  connected: readonly Connected[],
  request: BuyerNegotiation,
  options: { deadlineMs: string | undefined; io: CliIo },
): Promise<Chosen> {
  const deadlineMs =
    options.deadlineMs === undefined ? undefined : positiveInt(options.deadlineMs, '--deadline-ms');
  const best = await negotiateBest(
    connected.map((c) => c.buyer),
    request,
    deadlineMs === undefined ? {} : { deadlineMs },
  );
  const urlOf = (buyer: AcmpBuyer): string | undefined => connected.find((c) => c.buyer === buyer)?.url;
  const url = urlOf(best.buyer);
  if (url === undefined)
    throw new LocalError('INVALID_STATE', 'the best offer came from a provider the buyer did not connect to');
  options.io.err(
    `quotes: ${best.quotes.map((q, i) => `${urlOf(q.buyer) ?? i} ${'offer' in q ? q.offer.price_cu : 'none'}`).join(', ')}`,
  );
  return { url, agreement: best.agreement };
}

/** The agreement of an `--agreement <file>` flag. @throws UsageError for an unreadable or malformed file. */
export function readAgreementFile(path: string): NegotiatedAgreement & { agent_url: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UsageError(`cannot read the agreement file ${path}`);
  }
  const agreement = AgreementFileSchema.safeParse(parsed);
  if (!agreement.success) throw new UsageError(`${path} is not an agreement written by "acmp negotiate"`);
  return agreement.data;
}

/** The invoke of `acmp invoke --agreement <file>`: its input from `--input` or the agreement. */
export function agreementInvokeFromFlags(
  values: {
    input?: string;
    'input-type'?: string;
    stream?: boolean;
    'timeout-ms'?: string;
    'task-id'?: string;
  },
  agreement: NegotiatedAgreement,
): AgreementInvoke {
  const input =
    values.input === undefined ? agreement.input : payload(values.input, values['input-type'] ?? 'text');
  if (input === undefined)
    throw new UsageError('invoke --agreement needs --input (the agreement keeps none)');
  return {
    agreement,
    input,
    ...(values.stream === true ? { stream: true } : {}),
    ...(values['timeout-ms'] !== undefined
      ? { timeout_ms: positiveInt(values['timeout-ms'], '--timeout-ms') }
      : {}),
    ...(values['task-id'] !== undefined ? { task_id: values['task-id'] } : {}),
  };
}

function termsFromFlags(values: {
  capability?: string;
  'max-price'?: string;
  input?: string;
  'input-type'?: string;
  proof?: string;
  'valid-ms'?: string;
}): BuyerNegotiation {
  if (!values.capability) throw new UsageError('--capability is required');
  const input =
    values.input === undefined ? undefined : payload(values.input, values['input-type'] ?? 'text');
  return {
    capability: values.capability,
    ...(values['max-price'] !== undefined ? { max_price_cu: cu(values['max-price'], '--max-price') } : {}),
    ...(values.proof !== undefined ? { proof_method: values.proof } : {}),
    ...(values['valid-ms'] !== undefined
      ? { offer_valid_ms: positiveInt(values['valid-ms'], '--valid-ms') }
      : {}),
    ...(input !== undefined ? { input } : {}),
  };
}

function payload(raw: string, type: string): Payload {
  if (type === 'text') return { type, data: raw };
  if (type !== 'json') throw new UsageError('--input-type must be text or json');
  try {
    return { type, data: PayloadSchema.shape.data.parse(JSON.parse(raw)) };
  } catch {
    throw new UsageError('--input is not valid JSON');
  }
}

function cu(raw: string, flag: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new UsageError(`${flag} must be a non-negative number of CU`);
  return value;
}

function positiveInt(raw: string, flag: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new UsageError(`${flag} must be a positive integer`);
  return value;
}

/** The one `<agent-url>` of a verb that takes exactly one. @throws UsageError otherwise. */
function oneUrl(positionals: string[]): string {
  const [url, ...others] = positionals;
  if (url === undefined || others.length > 0) throw new UsageError('expected exactly one <agent-url>');
  return checkedUrl(url);
}

/** The `<agent-url>`s of a verb that takes one or more. @throws UsageError otherwise. */
function urls(positionals: string[]): string[] {
  if (positionals.length === 0) throw new UsageError('expected one or more <agent-url>');
  return positionals.map(checkedUrl);
}

function checkedUrl(url: string): string {
  if (!/^https?:\/\//.test(url)) throw new UsageError(`"${url}" is not an http(s) URL`);
  return url;
}

function connect(
  url: string,
  values: { token?: string; ca?: string; 'data-dir'?: string; wallet?: Wallet | undefined },
  io: CliIo,
): Promise<AcmpBuyer> {
  const { wallet } = values;
  return createAcmpBuyer({
    agentUrl: url,
    token: tokenFromFlags(values, io.env),
    caCert: caFromFlags(values, io.env),
    ...(wallet ? { wallet } : {}),
  });
}

/** Runs a verb's work; an ACMP refusal is printed with its code (exit 1). */
async function reported(io: CliIo, work: () => Promise<void>): Promise<number> {
  try {
    await work();
    return 0;
  } catch (error) {
    if (!(error instanceof AcmpError)) throw error;
    const name = acmpErrorSpec(error.code)?.name;
    io.err(
      `error ${error.code}${name ? ` (${name})` : ''}: ${error.message}${error.data === undefined ? '' : ` ${JSON.stringify(error.data)}`}`,
    );
    return 1;
  }
}
