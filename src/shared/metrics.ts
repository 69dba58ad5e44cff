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
  /** One Layer 6 offer request (`offer`) or accept (`agreement`) answered: the ACMP code, absent if it succeeded. */
  negotiation(step: 'offer' | 'agreement', code: number | undefined): void;
  /** One Layer 4 escrow request answered: its method and the ACMP error code (absent: it succeeded). */
  escrowOperation(method: string, code: number | undefined): void;
}

/** The ACMP task events {@link Metrics.acmpEvent} counts. */
export type AcmpTaskEvent = 'stream_chunk' | 'heartbeat' | 'owner_lost_reap';

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
  escrowOperation: () => undefined,
  negotiation: () => undefined,
};

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
