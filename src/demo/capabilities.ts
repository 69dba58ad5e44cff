import { sleep } from '../shared/async.js';
import { isJsonObject } from '../shared/json.js';
import { estimateTokens } from '../acmp/provider/provider-checks.js';
import type { JsonSchemaObject } from '../acmp/wire/capability-input.js';
import type { Payload } from '../acmp/wire/task-messages.js';
import type { AcmpCapability } from '../acmp/provider/provider-types.js';

const POSITIVE = new Set(
  'good great excellent improved improve growth grew gain gains strong love best positive up rising rose success happy beat exceeded record profit profitable outstanding'.split(
    ' ',
  ),
);
const NEGATIVE = new Set(
  'bad poor declined decline decreased worse worst weak loss losses negative down falling fell failure sad missed drop dropped hate problem problems significantly-worse'.split(
    ' ',
  ),
);
const NEGATORS = new Set(['not', 'no', 'never', "isn't", "wasn't", "didn't", "don't"]);
const INTENSIFIERS = new Set(['very', 'significantly', 'sharply', 'extremely', 'highly']);

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z']+/g) ?? [];
}

/** The text a demo input carries: `{type:'text', data:string}` or `{type:'json', data:{text}}`. */
function textOf(input: Payload): string {
  if (typeof input.data === 'string') return input.data;
  if (isJsonObject(input.data) && typeof input.data.text === 'string') return input.data.text;
  throw new TypeError('input carries no text');
}

/** Lexicon sentiment: ±1 per lexicon word, doubled after an intensifier, flipped after a negator. */
export function analyseSentiment(text: string): {
  sentiment: 'positive' | 'negative' | 'neutral';
  confidence: number;
  score: number;
} {
  const tokens = words(text);
  let score = 0;
  let hits = 0;
  tokens.forEach((word, i) => {
    const polarity = POSITIVE.has(word) ? 1 : NEGATIVE.has(word) ? -1 : 0;
    if (polarity === 0) return;
    const prev = tokens.slice(Math.max(0, i - 2), i);
    const weight = prev.some((w) => INTENSIFIERS.has(w)) || INTENSIFIERS.has(tokens[i + 1] ?? '') ? 2 : 1;
    score += (prev.some((w) => NEGATORS.has(w)) ? -polarity : polarity) * weight;
    hits += 1;
  });
  const sentiment = score > 0 ? 'positive' : score < 0 ? 'negative' : 'neutral';
  const confidence =
    hits === 0
      ? 0.5
      : Math.round(Math.min(0.99, 0.6 + (0.1 * Math.abs(score)) / Math.sqrt(hits)) * 100) / 100;
  return { sentiment, confidence, score };
}

function splitSentences(text: string): string[] {
  return (text.match(/[^.!?]+[.!?]*/g) ?? []).map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Extractive summary: sentences ranked by mean word frequency, the top `max` kept in document order. */
export function selectSentences(text: string, max: number): string[] {
  const sentences = splitSentences(text);
  const freq = new Map<string, number>();
  for (const w of words(text)) if (w.length > 3) freq.set(w, (freq.get(w) ?? 0) + 1);
  const scored = sentences.map((s, index) => {
    const ws = words(s).filter((w) => w.length > 3);
    const score = ws.length === 0 ? 0 : ws.reduce((sum, w) => sum + (freq.get(w) ?? 0), 0) / ws.length;
    return { s, index, score };
  });
  const keep = [...scored].sort((a, b) => b.score - a.score || a.index - b.index).slice(0, Math.max(1, max));
  return keep.sort((a, b) => a.index - b.index).map((k) => k.s);
}

const PER_TOKEN = (base: number): string =>
  `${base} CU + 0.000001 CU per token of input (about 4 characters a token)`;

/** Input `data` of the text capabilities: a string, or an object with a `text` string. */
const TEXT_INPUT: JsonSchemaObject = {
  description: 'the text: a string, or {"text": string}',
  anyOf: [
    { type: 'string', minLength: 1 },
    { type: 'object', properties: { text: { type: 'string', minLength: 1 } }, required: ['text'] },
  ],
};

/**
 * Demo capabilities: real, small, deterministic, no outside services.
 * - `sentiment-analysis`: lexicon based; 0.002 CU + 0.000001 CU per token (within the seed's 0.005 ceiling).
 * - `summarize`: extractive; streams one text chunk per selected sentence (input `data.max_sentences`, default 3).
 * - `slow-count`: counts to `data.n` with `stepMs` per step, heartbeat progress per step, honours the signal.
 */
export function demoCapabilities(options: { stepMs?: number } = {}): AcmpCapability[] {
  return [sentimentAnalysis(), summarize(), slowCount(options.stepMs ?? 100)];
}

/** The price of a text capability: `base` CU plus 0.000001 CU per token of input, to the nano-CU. */
function perToken(base: number): (input: Payload) => number {
  return (input) => Math.round((base + 0.000001 * estimateTokens(input)) * 1e9) / 1e9;
}

function sentimentAnalysis(): AcmpCapability {
  return {
    id: 'sentiment-analysis',
    name: 'Sentiment analysis',
    description: 'Lexicon-based sentiment of a text: positive, negative or neutral, with a confidence.',
    tags: ['nlp', 'sentiment'],
    price: perToken(0.002),
    priceDescription: PER_TOKEN(0.002),
    inputSchema: TEXT_INPUT,
    examples: [{ type: 'text', data: 'Revenue grew strongly and customers are happy.' }],
    handler: (input) => Promise.resolve({ type: 'json', data: analyseSentiment(textOf(input)) }),
  };
}

function summarize(): AcmpCapability {
  return {
    id: 'summarize',
    name: 'Extractive summary',
    description: 'Picks the most representative sentences; streams one sentence per chunk.',
    tags: ['nlp', 'summarization', 'streaming'],
    price: perToken(0.001),
    priceDescription: PER_TOKEN(0.001),
    inputSchema: {
      description: 'the text: a string, or {"text": string, "max_sentences": 1…50 (default 3)}',
      anyOf: [
        { type: 'string', minLength: 1 },
        {
          type: 'object',
          properties: {
            text: { type: 'string', minLength: 1 },
            max_sentences: { type: 'integer', minimum: 1, maximum: 50 },
          },
          required: ['text'],
        },
      ],
    },
    examples: [{ type: 'json', data: { text: 'First point. Second point. Third point.', max_sentences: 2 } }],
    // The handler contract is an AsyncIterable; this one computes synchronously.
    // eslint-disable-next-line @typescript-eslint/require-await
    async *handler(input, ctx) {
      const max =
        isJsonObject(input.data) && typeof input.data.max_sentences === 'number'
          ? input.data.max_sentences
          : 3;
      const picked = selectSentences(textOf(input), max);
      for (const [i, sentence] of picked.entries()) {
        if (ctx.signal.aborted) return;
        yield { type: 'text', data: i < picked.length - 1 ? `${sentence} ` : sentence };
      }
    },
  };
}

/** The largest n slow-count counts to. */
const MAX_COUNT = 10_000;

function slowCount(stepMs: number): AcmpCapability {
  return {
    id: 'slow-count',
    name: 'Slow count',
    description: 'Counts to n, one step at a time; for heartbeat, deadline and cancel demos.',
    tags: ['demo'],
    price: (input) => 0.0001 * Math.max(1, countTarget(input)),
    // A quote carries no input, only its size, which says nothing about n: it covers the largest count.
    quotePrice: () => 0.0001 * MAX_COUNT,
    priceDescription: `0.0001 CU per step of n, at least 0.0001 CU; quoted (Layer 6) at ${0.0001 * MAX_COUNT} CU, any n`,
    inputSchema: {
      description: 'n, the number to count to (0…10000): as text ("42"), a number, or {"n": 42}',
      anyOf: [
        { type: 'string', pattern: '^(10000|[0-9]{1,4})$' },
        { type: 'integer', minimum: 0, maximum: 10_000 },
        {
          type: 'object',
          properties: { n: { type: 'integer', minimum: 0, maximum: 10_000 } },
          required: ['n'],
        },
      ],
    },
    examples: [{ type: 'text', data: '5' }],
    async handler(input, ctx) {
      const n = countTarget(input);
      for (let i = 1; i <= n; i++) {
        await sleep(stepMs, { signal: ctx.signal });
        ctx.heartbeat(i / n, `counted ${i} of ${n}`);
      }
      return { type: 'json', data: { count: n } };
    },
  };
}

function countTarget(input: Payload): number {
  const raw = isJsonObject(input.data)
    ? input.data.n
    : typeof input.data === 'string'
      ? Number(input.data)
      : input.data;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw > MAX_COUNT)
    throw new TypeError('n must be an integer 0…10000');
  return raw;
}
