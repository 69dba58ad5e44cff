import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AcmpTaskEvent, StoredGauge } from '../shared/metrics.js';

/** Latency buckets in seconds: from a cached answer to a long-running capability. */
const INVOKE_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const INGEST_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** From a SQLite commit in the page cache to a PostgreSQL commit waiting on a lock. */
const COMMIT_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** From a notification on an idle server to a listener minutes behind. */
const LAG_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

/** A counter, gauge or histogram of one registry. */
function factory(registry: Registry) {
  const registers = [registry];
  return {
    counter: (name: string, help: string, labelNames: string[] = []): Counter =>
      new Counter({ name, help, labelNames, registers }),
    histogram: (name: string, help: string, shape: { labelNames?: string[]; buckets: number[] }): Histogram =>
      new Histogram({ name, help, labelNames: shape.labelNames ?? [], buckets: shape.buckets, registers }),
    gauge: (name: string, help: string): Gauge => new Gauge({ name, help, registers }),
  };
}

/** The request and ACMP task families (the table in docs/operations.md "Metrics"). */
function coreFamilies(registry: Registry) {
  const { counter, histogram, gauge } = factory(registry);
  return {
    requests: counter(
      'a2a_commerce_requests_total',
      'Requests answered (HTTP and gRPC), by binding, method and outcome.',
      ['binding', 'method', 'outcome'],
    ),
    invokes: counter(
      'acmp_invokes_total',
      'ACMP invokes ended, by capability and outcome (result, error, refused).',
      ['capability', 'outcome'],
    ),
    billed: counter('acmp_billed_cu_total', 'Compute units billed by results (cost_cu), by capability.', [
      'capability',
    ]),
    acmpErrors: counter(
      'acmp_errors_total',
      'ACMP errors answered (task errors and refusals), by ACMP code.',
      ['code'],
    ),
    running: gauge('acmp_running_tasks', 'ACMP tasks running on this host.'),
    invokeSeconds: histogram(
      'acmp_invoke_duration_seconds',
      'How long ACMP tasks ran, from start to stored outcome.',
      { labelNames: ['capability'], buckets: INVOKE_BUCKETS_S },
    ),
    push: counter('a2a_commerce_push_deliveries_total', 'Push-notification webhook deliveries, by outcome.', [
      'outcome',
    ]),
    commitSeconds: histogram(
      'a2a_commerce_store_commit_duration_seconds',
      'How long database commits of the stores took (one per transaction or group-commit batch).',
      { labelNames: ['operation'], buckets: COMMIT_BUCKETS_S },
    ),
    notifyLag: histogram(
      'a2a_commerce_pg_notification_lag_seconds',
      'How long PostgreSQL notifications took from NOTIFY to this host’s listener, by channel.',
      { labelNames: ['channel'], buckets: LAG_BUCKETS_S },
    ),
  };
}

/** The ACPspec, negotiation and escrow families. */
function protocolFamilies(registry: Registry) {
  const { counter, histogram } = factory(registry);
  return {
    envelopes: counter(
      'acp_envelopes_total',
      'ACPspec envelopes ingested, by kind and outcome (accepted, rejected).',
      ['kind', 'outcome'],
    ),
    acpErrors: counter('acp_errors_total', 'ACPspec envelopes refused, by ACP error code.', ['code']),
    consent: counter('acp_consent_refusals_total', 'ACPspec envelopes refused for missing consent.'),
    conflicts: counter(
      'acp_consent_conflicts_total',
      'Consent conflicts (refused widenings) the ACPspec receiver recorded, by consent scope.',
      ['scope'],
    ),
    ingestSeconds: histogram(
      'acp_ingest_duration_seconds',
      'How long ACPspec ingests took, accepted or refused.',
      {
        buckets: INGEST_BUCKETS_S,
      },
    ),
    escrow: counter(
      'acmp_escrow_operations_total',
      'Layer 4 escrow requests answered, by method and outcome (ok or the ACMP code).',
      ['method', 'outcome'],
    ),
    locked: counter('acmp_escrow_locked_cu_total', 'Compute units the escrow agent locked into escrows.'),
    released: counter(
      'acmp_escrow_released_cu_total',
      'Compute units paid out of escrows, by payout kind (release, auto_release, reclaim, expiry, resolution).',
      ['kind'],
    ),
    negotiation: counter(
      'acmp_negotiation_steps_total',
      'Layer 6 negotiation steps answered: offer requests (offer) and accepts (agreement), by outcome.',
      ['step', 'outcome'],
    ),
    sessionsOpened: counter(
      'acmp_negotiation_sessions_opened_total',
      'Negotiation sessions (session mode) this host opened.',
    ),
    sessionsEnded: counter(
      'acmp_negotiation_sessions_ended_total',
      'Negotiation sessions this host ended, by outcome (accepted, expired, canceled).',
      ['outcome'],
    ),
  };
}

/** Every metric family of one registry but the stored gauges. */
export function defineMetrics(registry: Registry) {
  return { ...coreFamilies(registry), ...protocolFamilies(registry) };
}

/** One label-free counter per ACMP task event: each event is one increment, no label lookup. */
export function taskEventCounters(registry: Registry): Record<AcmpTaskEvent, Counter> {
  const { counter } = factory(registry);
  return {
    stream_chunk: counter(
      'acmp_stream_chunks_total',
      'ACMP stream chunks produced by capability handlers on this host.',
    ),
    heartbeat: counter('acmp_heartbeats_total', 'ACMP heartbeats sent for tasks running on this host.'),
    owner_lost_reap: counter(
      'acmp_owner_lost_reaps_total',
      'Abandoned ACMP tasks this host finished as -33003 owner_lost.',
    ),
  };
}

/** Help text of each gauge read from storage at scrape time. */
const STORED_GAUGES: Record<StoredGauge, { name: string; help: string }> = {
  negotiation_sessions_open: {
    name: 'acmp_negotiation_sessions_open',
    help: 'Negotiation sessions open now (not yet due), in the store this host shares.',
  },
  escrow_held_cu: {
    name: 'acmp_escrow_held_cu',
    help: 'Compute units held in escrows now (locked, not yet paid out), in the store this host shares.',
  },
};

/**
 * The gauges read from storage when scraped: each asks its reader (NaN when the read fails, so a scrape
 * still answers; 0 while no module gave a reader).
 */
export function storedGauges(
  registry: Registry,
  readers: ReadonlyMap<StoredGauge, () => Promise<number>>,
): void {
  for (const [gauge, { name, help }] of Object.entries(STORED_GAUGES) as [
    StoredGauge,
    { name: string; help: string },
  ][]) {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const read = readers.get(gauge);
        if (read) this.set(await read().catch(() => Number.NaN));
      },
    });
  }
}
