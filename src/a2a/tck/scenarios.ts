/**
 * The behaviour the official A2A TCK expects of the agent under test, keyed by `messageId` prefix
 * (a2a-tck branch `1.0-dev`, `docs/SUT_REQUIREMENTS.md` and `scenarios/*.feature`, whose Gherkin steps
 * are the source of truth). Plain data: the executor (./executor.ts) turns each step into SDK events.
 */

/** One part of an artifact or message, as a scenario names it. */
export type TckPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'file'; readonly bytes: string; readonly filename: string; readonly mediaType: string }
  | { readonly kind: 'file-url'; readonly url: string; readonly filename: string; readonly mediaType: string }
  | { readonly kind: 'data'; readonly data: Readonly<Record<string, unknown>> };

/** One step of a scenario, in the order the feature file lists it. */
export type TckStep =
  /** "stream a status update to working". */
  | { readonly kind: 'working' }
  /** "add an artifact …" / "stream an artifact …" (a chunk when `append`). */
  | {
      readonly kind: 'artifact';
      readonly parts: readonly TckPart[];
      readonly append?: boolean;
      readonly lastChunk?: boolean;
    }
  /** "complete the task", optionally "with the message …" (the completed status carries it). */
  | { readonly kind: 'complete'; readonly message?: string }
  /** "return a message with a text part …": a Message reply, no task. */
  | { readonly kind: 'message'; readonly text: string }
  /** "update the task status to input_required". */
  | { readonly kind: 'input-required' }
  /** "reject with error rejected". */
  | { readonly kind: 'reject'; readonly text: string }
  /** "wait for 2x streaming timeout". */
  | { readonly kind: 'wait'; readonly timeouts: number };

export interface TckScenario {
  readonly prefix: string;
  readonly steps: readonly TckStep[];
}

const text = (value: string): TckPart => ({ kind: 'text', text: value });
/** The file part's content: the bytes of "tck", as the TCK's reference agents send them. */
const FILE: TckPart = { kind: 'file', bytes: 'tck', filename: 'output.txt', mediaType: 'text/plain' };
const artifact = (...parts: TckPart[]): TckStep => ({ kind: 'artifact', parts });
const WORKING: TckStep = { kind: 'working' };
const COMPLETE: TckStep = { kind: 'complete' };

/** Every scenario of the two feature files (core_operations.feature, streaming.feature). */
const SCENARIOS: readonly TckScenario[] = [
  // core_operations.feature
  { prefix: 'tck-complete-task', steps: [{ kind: 'complete', message: 'Hello from TCK' }] },
  { prefix: 'tck-artifact-text', steps: [artifact(text('Generated text content')), COMPLETE] },
  { prefix: 'tck-artifact-file', steps: [artifact(FILE), COMPLETE] },
  {
    prefix: 'tck-artifact-file-url',
    steps: [
      artifact({
        kind: 'file-url',
        url: 'https://example.com/output.txt',
        filename: 'output.txt',
        mediaType: 'text/plain',
      }),
      COMPLETE,
    ],
  },
  {
    prefix: 'tck-artifact-data',
    steps: [artifact({ kind: 'data', data: { key: 'value', count: 42 } }), COMPLETE],
  },
  { prefix: 'tck-message-response', steps: [{ kind: 'message', text: 'Direct message response' }] },
  { prefix: 'tck-input-required', steps: [{ kind: 'input-required' }] },
  { prefix: 'tck-reject-task', steps: [{ kind: 'reject', text: 'rejected' }] },
  // streaming.feature
  { prefix: 'tck-stream-001', steps: [WORKING, artifact(text('Stream hello from TCK')), COMPLETE] },
  { prefix: 'tck-stream-002', steps: [COMPLETE] },
  { prefix: 'tck-stream-003', steps: [WORKING, artifact(text('Stream task lifecycle')), COMPLETE] },
  { prefix: 'tck-stream-ordering-001', steps: [WORKING, artifact(text('Ordered output')), COMPLETE] },
  { prefix: 'tck-stream-artifact-text', steps: [WORKING, artifact(text('Streamed text content')), COMPLETE] },
  { prefix: 'tck-stream-artifact-file', steps: [WORKING, artifact(FILE), COMPLETE] },
  {
    prefix: 'tck-stream-artifact-chunked',
    steps: [
      WORKING,
      { kind: 'artifact', parts: [text('chunk-1 ')], append: true },
      { kind: 'artifact', parts: [text('chunk-2')], append: true, lastChunk: true },
      COMPLETE,
    ],
  },
  // SUT_REQUIREMENTS.md: the task stays active for at least 2 × TCK_STREAMING_TIMEOUT.
  { prefix: 'test-resubscribe-message-id', steps: [WORKING, { kind: 'wait', timeouts: 2 }, COMPLETE] },
];

/** Longest prefix first, so `tck-artifact-file-url` wins over `tck-artifact-file`. */
const BY_LENGTH = [...SCENARIOS].sort((a, b) => b.prefix.length - a.prefix.length);

/** The scenario a message id selects, or `undefined` (normal processing). */
export function scenarioFor(messageId: string): TckScenario | undefined {
  return BY_LENGTH.find((s) => messageId.startsWith(s.prefix));
}

/** The prefixes served, longest first (docs, tests). */
export const TCK_PREFIXES: readonly string[] = BY_LENGTH.map((s) => s.prefix);
