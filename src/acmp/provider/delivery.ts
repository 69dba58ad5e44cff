import type { AcmpResult, Payload } from '../wire/task-messages.js';
import type { ProviderEvent, TaskEvent } from './provider-types.js';
import type { FinishedTaskRecord, TaskOutcome } from './task-store.js';

/** How one invoke wants its events. */
export interface DeliveryMode {
  /** Chunks then a result without output (Layer 1 §7.1). */
  readonly stream: boolean;
  /** The transport can carry notifications (heartbeats; chunks). */
  readonly notify: boolean;
}

/** What a {@link Delivery} serves: one task's events for one invoke. */
export interface DeliveryOptions {
  readonly taskId: string;
  readonly mode: DeliveryMode;
  /** Receives each event of the invoke. */
  readonly sink: (event: TaskEvent) => void;
  /** Called once, after the last event. */
  readonly end: () => void;
}

/**
 * Turns one task's chunks, heartbeats and outcome into the events of one invoke. Live executions, stored
 * outcomes and waits on other hosts all feed the same class, so replay and live look alike.
 *
 * Layer 1 §7.1: chunk `seq` counts from 0 and the last chunk carries `final: true`; one chunk is held back
 * so the last can be marked. On an error the held chunk is dropped (§7.3: stop emitting chunks).
 */
export class Delivery {
  private seq = 0;
  private held: Payload | undefined;
  private done = false;

  private readonly taskId: string;
  private readonly mode: DeliveryMode;
  private readonly sink: (event: TaskEvent) => void;
  private readonly end: () => void;

  constructor(options: DeliveryOptions) {
    this.taskId = options.taskId;
    this.mode = options.mode;
    this.sink = options.sink;
    this.end = options.end;
  }

  get finished(): boolean {
    return this.done;
  }

  chunk(payload: Payload): void {
    if (this.done || !this.mode.stream) return;
    if (this.held !== undefined) this.emitChunk(this.held, false);
    this.held = payload;
  }

  heartbeat(progress?: number, detail?: string): void {
    if (this.done || !this.mode.notify) return;
    const params: { task_id: string; progress?: number; detail?: string } = { task_id: this.taskId };
    if (progress !== undefined) params.progress = progress;
    if (detail !== undefined) params.detail = detail;
    this.sink({ kind: 'heartbeat', params });
  }

  /** Ends the invoke with the task's stored outcome (and, for the substrate, how the task ended). */
  finish(record: FinishedTaskRecord): void {
    if (this.done) return;
    this.done = true;
    const { outcome, end } = record;
    const at = record.finishedAt ?? record.updatedAt;
    if (outcome.kind === 'error') this.sink({ kind: 'error', error: outcome.error, end, at });
    else if (this.mode.stream) {
      if (this.held !== undefined) this.emitChunk(this.held, true);
      this.sink({ kind: 'result', result: streamedResult(outcome.result), end, at });
    } else this.sink({ kind: 'result', result: { ...outcome.result, output_streamed: false }, end, at });
    this.end();
  }

  private emitChunk(chunk: Payload, final: boolean): void {
    this.sink({ kind: 'chunk', params: { task_id: this.taskId, seq: this.seq++, chunk, final } });
  }
}

/** Layer 1 §3.2: a streamed result omits `output` and says `output_streamed: true`. */
function streamedResult(result: AcmpResult): AcmpResult {
  const streamed: AcmpResult = { ...result, output_streamed: true };
  delete streamed.output;
  return streamed;
}

/**
 * The chunks to replay for a finished task: the handler's stored chunks, or a whole-output handler's
 * output as one chunk. An error outcome replays none (§7.3).
 */
export function replayChunks(outcome: TaskOutcome, stored: readonly Payload[]): readonly Payload[] {
  if (outcome.kind !== 'result') return [];
  if (stored.length > 0) return stored;
  return outcome.result.output ? [outcome.result.output] : [];
}

/** A task event as the plain ACMP event a caller of `invoke` sees (the substrate's end state left out). */
export function toProviderEvent(event: TaskEvent): ProviderEvent {
  switch (event.kind) {
    case 'chunk':
    case 'heartbeat':
      return event;
    case 'result':
      return { kind: 'result', result: event.result };
    case 'error':
      return { kind: 'error', error: event.error };
  }
}
