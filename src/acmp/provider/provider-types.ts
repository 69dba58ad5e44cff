import type { Metrics } from '../../shared/metrics.js';
import type { Clock, TimerClock } from '../../shared/clock.js';
import type { IdSource } from '../../shared/ids.js';
import type { Logger } from '../../shared/logger.js';
import type { AcmpErrorObject, AcmpEvent, CapabilityObject } from '../wire/messages.js';
import type {
  AcmpResult,
  HeartbeatParams,
  InvokeParams,
  Payload,
  StreamChunkParams,
} from '../wire/task-messages.js';
import type { CapabilityInputSchema } from '../wire/capability-input.js';
import type { Signer } from '../identity/signer.js';
import type { ParsedInvoke } from './provider-checks.js';
import type { AcceptParams, Ack, Offer, OfferRequestParams } from '../wire/negotiation-messages.js';
import type { ProviderNegotiation } from './provider-negotiation.js';
import type { PartyIdentity } from '../identity/host-identity.js';
import type { ProveIdentityResult } from '../identity/prove-identity.js';
import type { ProveIdentityParams } from '../wire/identity-messages.js';
import type {
  AcmpTaskRecord,
  AcmpTaskStore,
  TaskEnd,
  TaskListQuery,
  TaskOutcome,
  TaskScope,
} from './task-store.js';

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
  /**
   * The price a Layer 6 quote states when the price depends on more than the input's size (L6 §2.1: the
   * buyer sends no input, at most `input_tokens_est`). It MUST cover every input the capability accepts:
   * an invoke under the agreement costs exactly this (L6 §4). Without it, a computed price is quoted for
   * a text of the estimated size (docs/acmp-negotiation.md "Quote rules").
   */
  readonly quotePrice?: (request: { readonly inputTokensEst?: number }) => number;
  /** The price in words, for the card's skill and `acmp capabilities` (default: the fixed price). */
  readonly priceDescription?: string;
  /**
   * The schema of the input's `data` (JSON Schema 2020-12, or zod). Checked before pricing or any work:
   * input that fails it is refused with -32602 and `data.issues`. Shown on the card's skill.
   */
  readonly inputSchema?: CapabilityInputSchema;
  /** Example inputs, shown on the card's skill (`examples`) and by `acmp capabilities`. */
  readonly examples?: readonly Payload[];
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
export type EscrowVerifier = (
  escrowId: string,
  params: InvokeParams,
  options: { signal: AbortSignal },
) => Promise<void>;

/** What a provider sends the buyer for one invoke: notifications, then exactly one `result` or `error`. */
export type ProviderEvent = AcmpEvent;

/**
 * One event of a task as a binding delivers it: notifications, then exactly one terminal `result` or
 * `error` that also says how the task ended for the substrate (`end`) and when (`at`).
 */
export type TaskEvent =
  | { readonly kind: 'chunk'; readonly params: StreamChunkParams }
  | { readonly kind: 'heartbeat'; readonly params: HeartbeatParams }
  | { readonly kind: 'result'; readonly result: AcmpResult; readonly end: TaskEnd; readonly at: number }
  | { readonly kind: 'error'; readonly error: AcmpErrorObject; readonly end: TaskEnd; readonly at: number };

/** One `acmp/invoke` as a binding hands it to the provider, parsed at the binding's edge. */
export interface AdmitRequest {
  readonly invoke: ParsedInvoke;
  /** The authenticated caller; only it may join, replay, read or cancel the task. */
  readonly scope: TaskScope;
  /** The substrate's conversation id for a new task (a duplicate keeps the stored one). */
  readonly contextId: string;
  /** The invoke in the binding's encoding, stored with a new task so its task view can show it. */
  readonly request: string;
  /** Tasks the invoke names as its basis (A2A `referenceTaskIds`): a negotiation session names its agreement. */
  readonly references?: readonly string[];
}

/** How one connection wants a task's events. */
export interface AttachOptions {
  /** The connection carries notifications (chunks, heartbeats). */
  readonly canStream: boolean;
  /** The consumer went away: delivery stops, the work does not (only a cancel stops work). */
  readonly signal?: AbortSignal;
}

/**
 * The answer to one invoke (Layer 1 §3.1.1): refused before any task exists (nothing is stored), or a
 * task — new, joined or replayed — whose events follow from the start (chunks from seq 0).
 */
export type Admission =
  | { readonly kind: 'refused'; readonly error: AcmpErrorObject }
  | { readonly kind: 'task'; readonly record: AcmpTaskRecord; readonly events: AsyncIterable<TaskEvent> };

/** The answer to a cancel of one task (Layer 1 §3.7, A2A CancelTask). */
export type CancelOutcome =
  | { readonly kind: 'unknown' }
  | { readonly kind: 'already_finished'; readonly record: AcmpTaskRecord }
  | { readonly kind: 'cancelled'; readonly record: AcmpTaskRecord };

/** The running tasks a caller may have at once by default (docs/acmp-core.md "Limits per caller"). */
export const DEFAULT_MAX_RUNNING_TASKS = 32;

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
  /**
   * Layer 6 negotiation (offerRequest / accept, agreements enforced at invoke); off when absent. The
   * composer builds it over the same capabilities, with the provider's key to sign offers (Layer 7 §4.1).
   */
  negotiation?: ProviderNegotiation;
  /**
   * The provider's Layer 7 identity: its DID goes into the capability object (§2.2) and it answers
   * `acmp/proveIdentity` (§3); absent: no DID, and proveIdentity is -32601.
   */
  identity?: PartyIdentity;
  /**
   * Running tasks per caller identity, over every tenant and every host sharing the store; new work
   * beyond it is refused (-33099 `max_running_tasks`). Default {@link DEFAULT_MAX_RUNNING_TASKS};
   * `null`: no cap.
   */
  maxRunningTasks?: number | null;
  /** The record of truth of every task (default: a new in-memory store). */
  store?: AcmpTaskStore;
  /**
   * The provider's Layer 7 identity: with it every result (proof included) carries a §4 envelope, and the
   * capability object advertises `did` (§2.2); give the `negotiation` the same key so offers are signed
   * too. Without it no result is signed (a Layer-4-only deployment stays conforming, §4.1).
   */
  signer?: Signer;
  /**
   * How often a process following another host's task re-reads it in case a signal was lost
   * (default: the liveness interval, heartbeat interval or 5 s).
   */
  fallbackReadMs?: number;
  /** Time and the timers of deadlines, heartbeats and liveness; a clock without timers uses the system's. */
  clock?: Clock | TimerClock;
  ids?: IdSource;
  logger?: Logger;
  /** Counts invokes, refusals, CU billed and running tasks (docs/operations.md "Metrics"); default: none. */
  metrics?: Metrics;
}

/** A transport-free ACMP provider (Layer 1 §3). */
export interface AcmpProvider {
  /**
   * The Layer 1 §1 capability object (the A2A AgentExtension `params`), with the DID when the provider
   * has an identity (read it per use: a did:web is known once the host listens).
   */
  readonly capabilityObject: CapabilityObject;
  readonly capabilities: readonly AcmpCapability[];
  /** This provider's host id in the shared store. */
  readonly hostId: string;
  /**
   * Admits one parsed invoke (Layer 1 §3.1.1): a new task runs once across every host sharing the store;
   * the same agent with the same params joins or replays it; anything else is refused with -32602.
   * Never throws for protocol errors.
   */
  admit(request: AdmitRequest, options: AttachOptions): Promise<Admission>;
  /** Joins a running task of `scope` (A2A SubscribeToTask); `undefined` when there is none. */
  join(
    taskId: string,
    scope: TaskScope,
    options: AttachOptions & { stream?: boolean },
  ): Promise<Admission | undefined>;
  /**
   * Cancels a running task of `scope` (Layer 1 §3.7) from any host: the -33004 outcome is stored at once
   * and the host running the work stops it. `end` says how the substrate records it.
   */
  cancelTask(taskId: string, scope: TaskScope, end: TaskEnd): Promise<CancelOutcome>;
  /** A task of `scope`, as stored. */
  record(taskId: string, scope: TaskScope): Promise<AcmpTaskRecord | undefined>;
  /**
   * `acmp/offerRequest` (Layer 6 §2.1): a stateless, self-verifying offer.
   * @throws AcmpError -32601 when negotiation is off; -33001, -33002, -33006.
   */
  quote(params: OfferRequestParams, scope: TaskScope): Promise<Offer>;
  /**
   * `acmp/accept` (Layer 6 §2.2): records the agreement once.
   * @throws AcmpError -32601 when negotiation is off; -34001, -34002, -34003, -33005.
   */
  accept(params: AcceptParams, scope: TaskScope): Promise<Ack>;
  /**
   * `acmp/proveIdentity` (Layer 7 §3): the envelope over `{nonce, did}` signed with the newest key.
   * @throws AcmpError -32601 when the provider has no identity.
   */
  proveIdentity(
    params: ProveIdentityParams,
    options?: { signal?: AbortSignal },
  ): Promise<ProveIdentityResult>;
  /** The tasks of `scope`, filtered and paged. */
  list(scope: TaskScope, query: TaskListQuery): Promise<{ records: AcmpTaskRecord[]; total: number }>;
  /**
   * In-process convenience over {@link admit} for one caller ({@link LOCAL_SCOPE} unless given): parses
   * the params, and delivers a refusal as the single error event.
   */
  invoke(rawParams: unknown, options: AttachOptions & { scope?: TaskScope }): AsyncIterable<ProviderEvent>;
  /**
   * In-process `acmp/cancel` (Layer 1 §3.7); `found` is false when no running task has that id.
   * @throws AcmpError -32602 for malformed params.
   */
  cancel(rawParams: unknown, options?: { scope?: TaskScope }): Promise<{ found: boolean }>;
  /** The stored outcome of a finished task (any scope; for in-process callers and tests). */
  outcome(taskId: string): Promise<TaskOutcome | undefined>;
  /**
   * Stops taking new work (a new task is refused -33099 `draining`; stored tasks are still joined and
   * replayed), then waits at most `graceMs` for the tasks running on this host to end and their outcome
   * to be stored.
   */
  drain(graceMs: number): Promise<void>;
  /** Fails running local tasks with -33099 (stored), retires this host and stops timers. */
  close(): Promise<void>;
}

/** The scope of in-process callers that name none (loopback transport, tests). */
export const LOCAL_SCOPE: TaskScope = { tenant: '', agent: 'local' };
