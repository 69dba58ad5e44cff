import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { AcmpResult, InvokeParams, Payload, StreamChunkParams } from '../wire/task-messages.js';
import { assembleChunks, samePayload, verifyProof } from '../wire/proof.js';

/** A provider broke the protocol (chunk order, proof, cost): -33099 with `data.reason` (docs/acmp-core.md). */
function violation(taskId: string, reason: string, extra: Record<string, unknown> = {}): AcmpError {
  return new AcmpError(
    ACMP_CODE.internal,
    { task_id: taskId, reason, ...extra },
    { message: 'Provider protocol violation' },
  );
}

/**
 * Chunk bookkeeping of one task across attempts (Layer 1 §3.5, §7.1): within an attempt `seq` must be
 * 0, 1, 2… with nothing after `final`; a retry's replayed chunks must equal what was already delivered.
 */
export class ChunkTracker {
  readonly delivered: Payload[] = [];
  private expected = 0;
  private finalSeen = false;

  constructor(private readonly taskId: string) {}

  /** Starts a new attempt: the provider replays from seq 0. */
  restart(): void {
    this.expected = 0;
    this.finalSeen = false;
  }

  /**
   * Accepts a chunk; returns true when it is new (to be passed on), false for a replayed duplicate.
   * @throws AcmpError -33099 on a gap, duplicate, chunk after final or a replay that differs.
   */
  accept(params: StreamChunkParams): boolean {
    if (params.task_id !== this.taskId) throw violation(this.taskId, 'chunk_task_mismatch');
    if (this.finalSeen) throw violation(this.taskId, 'chunk_after_final', { seq: params.seq });
    if (params.seq !== this.expected)
      throw violation(this.taskId, 'chunk_out_of_order', { expected: this.expected, seq: params.seq });
    this.expected += 1;
    this.finalSeen = params.final === true;
    const earlier = this.delivered[params.seq];
    if (earlier !== undefined) {
      if (!samePayload(earlier, params.chunk))
        throw violation(this.taskId, 'chunk_replay_mismatch', { seq: params.seq });
      return false;
    }
    this.delivered.push(params.chunk);
    return true;
  }

  /** The full output of a result (reassembled for a streamed one), after the checks of §3.2/§7.1 and Layer 3. */
  complete(params: InvokeParams, result: AcmpResult): Payload {
    const taskId = this.taskId;
    if (result.task_id !== taskId) throw violation(taskId, 'result_task_mismatch');
    let output: Payload | undefined = result.output;
    if (result.output_streamed === true) {
      if (params.stream !== true) throw violation(taskId, 'unrequested_stream');
      if (this.delivered.length > 0 && !this.finalSeen) throw violation(taskId, 'missing_final_chunk');
      output = assembleChunks(this.delivered);
    }
    if (output === undefined) throw violation(taskId, 'missing_output');
    // Layer 1 §3.2: cost_cu MUST be ≤ max_price_cu.
    if (params.max_price_cu !== undefined && result.cost_cu > params.max_price_cu)
      throw violation(taskId, 'cost_above_max_price');
    if (params.proof_method !== undefined) {
      // Layer 3 §2/§3.1: verify against the (reassembled) output and the input we sent.
      const check = verifyProof(result.proof, {
        method: params.proof_method,
        output,
        ...(params.input ? { input: params.input } : {}),
      });
      if (!check.ok) throw violation(taskId, `proof_${check.reason}`);
    }
    return output;
  }
}
