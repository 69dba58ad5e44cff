import type { Clock } from '../shared/clock.js';
import type { IdSource } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import type { AcmpEvent, CapabilityObject, InvokeParams, Payload } from './messages.js';
import type { AcmpTaskStore, TaskOutcome } from './task-store.js';

/** What a capability handler gets besides its input. */
export interface HandlerContext {
  readonly taskId: string;
  /** Aborts on `acmp/cancel` (Layer 1 §3.7), on the `timeout_ms` deadline (§3.1) and on provider close. */
  readonly signal: AbortSignal;
  /**
   * Reports progress as an `acmp/heartbeat` (Layer 1 §3.6). `progress` is clamped to 0…1. A no-op when the
   * provider advertises no `heartbeat_interval_ms` (it MUST NOT emit what it did not advertise, §1).
   */
  heartbeat(progress?: number, detail?: string): void;
}

/**
 * One capability the provider sells. The handler returns the whole output, or an async iterable of
 * output chunks (streamed to buyers that asked for `stream: true`, assembled for the others).
 */
export interface AcmpCapability {
  readonly id: string;
  readonly name?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  /** Price in CU: fixed, or computed from the input. Compared with `max_price_cu` (Layer 1 §3.1). */
  readonly price: number | ((input: Payload) => number);
  /** Proof methods offered (default `['result-hash']`); only `result-hash` is implemented. */
  readonly proofMethods?: readonly string[];
  handler(input: Payload, ctx: HandlerContext): Promise<Payload> | AsyncIterable<Payload>;
  /** `tokens_used` for a result; default: about four characters per token of input plus output (docs). */
  tokens?(input: Payload, output: Payload): number;
}

/**
 * Checks an `escrow_id` before work starts (Layer 4 via Layer 1 §3.1).
 * @throws AcmpError -33005 when the escrow is invalid, expired or insufficient.
 */
export type EscrowVerifier = (escrowId: string, params: InvokeParams, options: { signal: AbortSignal }) => Promise<void>;

/** What a provider sends the buyer for one invoke: notifications, then exactly one `result` or `error`. */
export type ProviderEvent = AcmpEvent;

/** Options of {@link createAcmpProvider}. */
export interface AcmpProviderOptions {
  capabilities: readonly AcmpCapability[];
  /** Self-reported `provider_id` (Layer 1 §4, `agent:<name>:<region>`), put on results when set. */
  providerId?: string;
  /** Advertise and serve `output_streaming` (default true). */
  outputStreaming?: boolean;
  /** Heartbeat interval in ms (default 5000); `null` advertises none and emits no heartbeats. */
  heartbeatIntervalMs?: number | null;
  escrow?: EscrowVerifier;
  /** Source of truth for idempotency (default: a new in-memory store). */
  store?: AcmpTaskStore;
  /** How often a process waiting on another host's task polls the store (default 250 ms). */
  storePollMs?: number;
  clock?: Clock;
  ids?: IdSource;
  logger?: Logger;
}

/** A transport-free ACMP provider (Layer 1 §3). */
export interface AcmpProvider {
  /** The Layer 1 §1 capability object (the A2A AgentExtension `params`). */
  readonly capabilityObject: CapabilityObject;
  readonly capabilities: readonly AcmpCapability[];
  /**
   * Serves one `acmp/invoke`. The iterable ends with exactly one terminal event and never throws for
   * protocol errors. `canStream`: the transport can deliver notifications. `signal`: the consumer
   * detached — delivery stops, the work does not (only `acmp/cancel` stops work).
   */
  invoke(rawParams: unknown, options: { canStream: boolean; signal?: AbortSignal }): AsyncIterable<ProviderEvent>;
  /**
   * Serves `acmp/cancel` (Layer 1 §3.7). `found` is false when no running task has that id.
   * @throws AcmpError -32602 for malformed params.
   */
  cancel(rawParams: unknown): Promise<{ found: boolean }>;
  /** The stored outcome of a finished task. */
  outcome(taskId: string): Promise<TaskOutcome | undefined>;
  /** Whether the store knows the task id at all: running (on any host sharing the store) or finished. */
  known(taskId: string): Promise<boolean>;
  /** Fails running local tasks with -33099 and stops timers. */
  close(): Promise<void>;
}
