/**
 * What the protocol cores report to the host's metrics (docs/operations.md "Metrics"), without knowing
 * how they are exposed: the host implements it over Prometheus (src/server/metrics.ts); cores default to
 * {@link NO_METRICS}. Every label value passed here is bounded: capability ids the provider serves,
 * spec-defined kinds, methods and codes — never task ids, callers or tenants.
 */
export interface Metrics {
  /** One HTTP or gRPC request answered: its binding, method and outcome (`ok`, `client_error`, …). */
  request(binding: string, method: string, outcome: string): void;
  /**
   * One ACMP invoke ended (Layer 1 §3): `result`, `error` (the task failed) or `refused` (before a task
   * ran); `code` the ACMP error code of the last two; `costCu` what the result billed; `seconds` how long
   * the task ran (absent for refusals).
   */
  acmpInvoke(end: AcmpInvokeEnd): void;
  /** A task started (`+1`) or ended (`-1`) running on this host. */
  acmpRunning(delta: 1 | -1): void;
  /**
   * One ACMP task event on this host: a stream chunk a handler produced (Layer 1 §3.4), a heartbeat sent
   * (§3.6), or an abandoned task this host finished as -33003 `owner_lost`.
   */
  acmpEvent(event: AcmpTaskEvent): void;
  /** One ACPspec envelope ingested: its kind, `accepted` or `rejected`, the ACP error code, the time taken. */
  acpEnvelope(kind: string, code: string | undefined, seconds: number): void;
  /** One `consent.conflict` the receiver recorded (a refused widening) in a committed ingest, by scope. */
  acpConsentConflict(scope: string): void;
  /** One Layer 6 offer request (`offer`) or accept (`agreement`) answered: the ACMP code, absent if it succeeded. */
  negotiation(step: 'offer' | 'agreement', code: number | undefined): void;
  /** A negotiation session (session mode) this host opened, or ended (accepted, expired, canceled). */
  negotiationSession(event: SessionEvent): void;
  /** One Layer 4 escrow request answered: its method and the ACMP error code (absent: it succeeded). */
  escrowOperation(method: string, code: number | undefined): void;
  /**
   * Compute units the escrow agent moved in a committed transaction: into escrow by a lock (`locked`), or
   * out of it by a payout of the given kind (`release`, `reclaim`, …; Layer 4 §6).
   */
  escrowFunds(flow: string, cu: number): void;
  /** One webhook delivery of a push notification (A2A §4.3) and how it ended. */
  pushDelivery(outcome: PushOutcome): void;
  /** One database commit of a store (a transaction or a group-commit batch) and how long it took. */
  storeCommit(operation: StoreOperation, seconds: number): void;
  /** How long one PostgreSQL notification took from NOTIFY to this host's listener, on `channel`. */
  pgNotificationLag(channel: string, seconds: number): void;
  /**
   * A value read from shared storage when metrics are scraped (the same for every host on the database):
   * open negotiation sessions, CU held in escrow. The last reader given for a gauge wins.
   */
  readGauge(gauge: StoredGauge, read: () => Promise<number>): void;
}

/** The ACMP task events {@link Metrics.acmpEvent} counts. */
export type AcmpTaskEvent = 'stream_chunk' | 'heartbeat' | 'owner_lost_reap';

/** What {@link Metrics.negotiationSession} counts: an opening, or an end by its outcome. */
export type SessionEvent = 'opened' | 'accepted' | 'expired' | 'canceled';

/** How a push delivery ended: posted (2xx), answered otherwise, a redirect not followed, refused, failed. */
export type PushOutcome = 'delivered' | 'http_error' | 'redirect_refused' | 'origin_refused' | 'failed';

/** The store commits {@link Metrics.storeCommit} times (a small fixed set). */
export type StoreOperation = 'acmp_claim' | 'acmp_chunks' | 'acmp_outcome' | 'acp_ingest' | 'escrow';

/** The gauges {@link Metrics.readGauge} reads from storage. */
export type StoredGauge = 'negotiation_sessions_open' | 'escrow_held_cu';

/** One ended ACMP invoke, for {@link Metrics.acmpInvoke}. */
export interface AcmpInvokeEnd {
  readonly capability: string;
  readonly outcome: 'result' | 'error' | 'refused';
  readonly code?: number | undefined;
  readonly costCu?: number | undefined;
  readonly seconds?: number | undefined;
}

/** Metrics that record nothing: the default of every core. */
export const NO_METRICS: Metrics = {
  request: () => undefined,
  acmpInvoke: () => undefined,
  acmpRunning: () => undefined,
  acmpEvent: () => undefined,
  acpEnvelope: () => undefined,
  acpConsentConflict: () => undefined,
  escrowOperation: () => undefined,
  escrowFunds: () => undefined,
  negotiation: () => undefined,
  negotiationSession: () => undefined,
  pushDelivery: () => undefined,
  storeCommit: () => undefined,
  pgNotificationLag: () => undefined,
  readGauge: () => undefined,
};

/**
 * Runs one store commit and reports how long it took (also when it failed): one observation per commit,
 * however many rows it wrote.
 */
export async function timedCommit<T>(
  metrics: Metrics,
  operation: StoreOperation,
  commit: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  try {
    return await commit();
  } finally {
    metrics.storeCommit(operation, (performance.now() - started) / 1000);
  }
}

/**
 * Counts an invoke refused before any task ran, under its capability when the provider serves it (else
 * `unknown`: a caller's made-up capability id is no label).
 */
export function countRefusal(
  metrics: Metrics,
  refusal: { capability: string | undefined; served: ReadonlyMap<string, unknown>; code: number },
): void {
  const { capability, served, code } = refusal;
  const known = capability !== undefined && served.has(capability) ? capability : 'unknown';
  metrics.acmpInvoke({ capability: known, outcome: 'refused', code });
}
