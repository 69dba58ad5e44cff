import type express from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { bearerVerifier } from '../a2a/bearer.js';
import { ESCROW_METHODS } from '../acmp/escrow/constants.js';
import type { AcmpInvokeEnd, AcmpTaskEvent, Metrics } from '../shared/metrics.js';

/** Where the host serves its metrics (docs/operations.md "Metrics"). */
const METRICS_PATH = '/metrics';

/** Latency buckets in seconds: from a cached answer to a long-running capability. */
const INVOKE_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const INGEST_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** The ACPspec code of a consent refusal (ACPspec consent rules), counted on its own too. */
const CONSENT_REFUSED = 'ACP_CONSENT_REQUIRED';

/** A host's metrics: the {@link Metrics} the cores report to, over one registry of its own. */
export interface HostMetrics extends Metrics {
  readonly registry: Registry;
}

/**
 * Label children cached by their values: `labels()` hashes its arguments on every call, a cached child
 * is one map lookup (the label sets are bounded, so the cache is too).
 */
function children<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const cache = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = cache.get(key);
    if (!child) cache.set(key, (child = make(...values)));
    return child;
  };
}

/** The metric families of one registry (the table in docs/operations.md "Metrics"). */
function defineMetrics(registry: Registry) {
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: string[]): Counter =>
    new Counter({ name, help, labelNames, registers });
  const requests = counter(
    'a2a_commerce_requests_total',
    'Requests answered (HTTP and gRPC), by binding, method and outcome.',
    ['binding', 'method', 'outcome'],
  );
  const invokes = counter(
    'acmp_invokes_total',
    'ACMP invokes ended, by capability and outcome (result, error, refused).',
    ['capability', 'outcome'],
  );
  const billed = counter(
    'acmp_billed_cu_total',
    'Compute units billed by results (cost_cu), by capability.',
    ['capability'],
  );
  const acmpErrors = counter(
    'acmp_errors_total',
    'ACMP errors answered (task errors and refusals), by ACMP code.',
    ['code'],
  );
  const running = new Gauge({
    name: 'acmp_running_tasks',
    help: 'ACMP tasks running on this host.',
    registers,
  });
  const invokeSeconds = new Histogram({
    name: 'acmp_invoke_duration_seconds',
    help: 'How long ACMP tasks ran, from start to stored outcome.',
    labelNames: ['capability'],
    buckets: INVOKE_BUCKETS_S,
    registers,
  });
  const envelopes = counter(
    'acp_envelopes_total',
    'ACPspec envelopes ingested, by kind and outcome (accepted, rejected).',
    ['kind', 'outcome'],
  );
  const acpErrors = counter('acp_errors_total', 'ACPspec envelopes refused, by ACP error code.', ['code']);
  const consent = new Counter({
    name: 'acp_consent_refusals_total',
    help: 'ACPspec envelopes refused for missing consent.',
    registers,
  });
  const ingestSeconds = new Histogram({
    name: 'acp_ingest_duration_seconds',
    help: 'How long ACPspec ingests took, accepted or refused.',
    buckets: INGEST_BUCKETS_S,
    registers,
  });
  const escrow = counter(
    'acmp_escrow_operations_total',
    'Layer 4 escrow requests answered, by method and outcome (ok or the ACMP code).',
    ['method', 'outcome'],
  );

  const negotiation = counter(
    'acmp_negotiation_steps_total',
    'Layer 6 negotiation steps answered: offer requests (offer) and accepts (agreement), by outcome.',
    ['step', 'outcome'],
  );
  return {
    requests,
    invokes,
    billed,
    acmpErrors,
    running,
    invokeSeconds,
    envelopes,
    acpErrors,
    consent,
    ingestSeconds,
    escrow,
    negotiation,
  };
}

/** One label-free counter per ACMP task event: each event is one increment, no label lookup. */
function taskEventCounters(registry: Registry): Record<AcmpTaskEvent, Counter> {
  const registers = [registry];
  return {
    stream_chunk: new Counter({
      name: 'acmp_stream_chunks_total',
      help: 'ACMP stream chunks produced by capability handlers on this host.',
      registers,
    }),
    heartbeat: new Counter({
      name: 'acmp_heartbeats_total',
      help: 'ACMP heartbeats sent for tasks running on this host.',
      registers,
    }),
    owner_lost_reap: new Counter({
      name: 'acmp_owner_lost_reaps_total',
      help: 'Abandoned ACMP tasks this host finished as -33003 owner_lost.',
      registers,
    }),
  };
}

/**
 * The host's Prometheus metrics (prom-client) in a registry of its own, not the library's global one:
 * several hosts may run in one process.
 */
export function createHostMetrics(): HostMetrics {
  const registry = new Registry();
  const m = defineMetrics(registry);
  const events = taskEventCounters(registry);
  const negotiationOf = children((s, o) => m.negotiation.labels(s, o));
  const requestOf = children((b, x, o) => m.requests.labels(b, x, o));
  const invokeOf = children((c, o) => m.invokes.labels(c, o));
  const billedOf = children((c) => m.billed.labels(c));
  const acmpErrorOf = children((c) => m.acmpErrors.labels(c));
  const invokeSecondsOf = children((c) => m.invokeSeconds.labels(c));
  const envelopeOf = children((k, o) => m.envelopes.labels(k, o));
  const acpErrorOf = children((c) => m.acpErrors.labels(c));
  const escrowOf = children((x, o) => m.escrow.labels(x, o));
  return {
    registry,
    request: (binding, method, outcome) => requestOf(binding, method, outcome).inc(),
    acmpInvoke: (end: AcmpInvokeEnd) => {
      invokeOf(end.capability, end.outcome).inc();
      if (end.code !== undefined) acmpErrorOf(String(end.code)).inc();
      if (end.costCu !== undefined && end.costCu > 0) billedOf(end.capability).inc(end.costCu);
      if (end.seconds !== undefined) invokeSecondsOf(end.capability).observe(end.seconds);
    },
    acmpRunning: (delta) => m.running.inc(delta),
    acmpEvent: (event) => events[event].inc(),
    negotiation: (step, code) => negotiationOf(step, code === undefined ? 'ok' : String(code)).inc(),
    acpEnvelope: (kind, code, seconds) => {
      envelopeOf(kind, code === undefined ? 'accepted' : 'rejected').inc();
      if (code !== undefined) acpErrorOf(code).inc();
      if (code === CONSENT_REFUSED) m.consent.inc();
      m.ingestSeconds.observe(seconds);
    },
    escrowOperation: (method, code) =>
      escrowOf(
        ESCROW_METHOD_NAMES.has(method) ? method : 'other',
        code === undefined ? 'ok' : String(code),
      ).inc(),
  };
}

/** How an HTTP status counts as a request outcome (a bounded set). */
function outcomeOf(status: number): string {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'unauthenticated';
  if (status >= 500) return 'server_error';
  return status >= 400 ? 'client_error' : 'ok';
}

/** Escrow methods counted by name (Layer 4 §4); anything else counts as `other`. */
const ESCROW_METHOD_NAMES: ReadonlySet<string> = new Set(ESCROW_METHODS);

/** HTTP methods counted by name; anything else counts as `other`. */
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * Serves `GET /metrics` (the Prometheus text format) and counts every other request once answered.
 * Mounted after the Host/Origin check and before the request rate, so a scrape is never rate-limited.
 * With a `token`, a scrape must send `Authorization: Bearer <token>`, else 401.
 */
export function mountMetrics(
  app: express.Express,
  options: { metrics: HostMetrics; token?: string | undefined; bindingOf: (req: express.Request) => string },
): void {
  const { metrics, token } = options;
  // The bearer check of every RPC (SHA-256 digests compared in constant time), with the one scrape token.
  const verify = token === undefined ? undefined : bearerVerifier([{ identity: 'metrics', secret: token }]);
  app.get(METRICS_PATH, (req, res, next) => {
    if (verify && 'refused' in verify(req.header('authorization'))) {
      res.set('www-authenticate', 'Bearer realm="metrics"');
      res
        .status(401)
        .json({ error: { code: 401, status: 'UNAUTHENTICATED', message: 'Metrics token required' } });
      return;
    }
    metrics.registry.metrics().then((text) => {
      res.set('cache-control', 'no-store');
      res.type(metrics.registry.contentType).send(text);
    }, next);
  });
  app.use((req, res, next) => {
    // Read now: routers mounted at a path rewrite `req.url` while they handle the request.
    const binding = options.bindingOf(req);
    const method = METHODS.has(req.method) ? req.method : 'other';
    res.on('finish', () => metrics.request(binding, method, outcomeOf(res.statusCode)));
    next();
  });
}
