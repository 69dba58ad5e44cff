import type express from 'express';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { bearerVerifier } from '../a2a/host/bearer.js';
import { ESCROW_METHODS } from '../acmp/escrow/constants.js';
import { PAYOUT_KINDS } from '../acmp/escrow/transitions.js';
import { ACP_CONSENT_SCOPES } from '../acpspec/constants.js';
import type { AcmpInvokeEnd, Metrics, StoredGauge } from '../shared/metrics.js';
import { defineMetrics, storedGauges, taskEventCounters } from './metrics-families.js';

/** Where the host serves its metrics (docs/operations.md "Metrics"). */
export const METRICS_PATH = '/metrics';

/** The ACPspec code of a consent refusal (ACPspec consent rules), counted on its own too. */
const CONSENT_REFUSED = 'ACP_CONSENT_REQUIRED';

/** A host's metrics: the {@link Metrics} the cores report to, over one registry of its own. */
export interface HostMetrics extends Metrics {
  readonly registry: Registry;
  /** The exposition text of a scrape: the host's registry, and the process metrics when they are on. */
  scrape(): Promise<string>;
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

/** A label value from a fixed set, anything else `other`. */
function bounded(values: ReadonlySet<string>, value: string): string {
  return values.has(value) ? value : 'other';
}

/**
 * The process metrics (`process_*`, `nodejs_*`): collected once per process, in a registry of their own
 * that every host with them on adds to its scrape — several hosts in one process never start the
 * collectors (timers, GC observers) twice, and report the same figures, which are the process's.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Escrow methods counted by name (Layer 4 §4); anything else counts as `other`. */
const ESCROW_METHOD_NAMES: ReadonlySet<string> = new Set(ESCROW_METHODS);
const PAYOUT_KIND_NAMES: ReadonlySet<string> = new Set(PAYOUT_KINDS);
const CONSENT_SCOPE_NAMES: ReadonlySet<string> = new Set(ACP_CONSENT_SCOPES);

/** Options of {@link createHostMetrics}. */
export interface HostMetricsOptions {
  /** Add the process metrics (`process_*`, `nodejs_*`) to every scrape. */
  readonly process?: boolean;
}

/**
 * The host's Prometheus metrics (prom-client) in a registry of its own, not the library's global one:
 * several hosts may run in one process.
 */
export function createHostMetrics(options: HostMetricsOptions = {}): HostMetrics {
  const registry = new Registry();
  const m = defineMetrics(registry);
  const events = taskEventCounters(registry);
  const readers = new Map<StoredGauge, () => Promise<number>>();
  storedGauges(registry, readers);
  const scraped = options.process ? Registry.merge([registry, processMetrics()]) : registry;
  const negotiationOf = children((s, o) => m.negotiation.labels(s, o));
  const requestOf = children((b, x, o) => m.requests.labels(b, x, o));
  const invokeOf = children((c, o) => m.invokes.labels(c, o));
  const billedOf = children((c) => m.billed.labels(c));
  const acmpErrorOf = children((c) => m.acmpErrors.labels(c));
  const invokeSecondsOf = children((c) => m.invokeSeconds.labels(c));
  const envelopeOf = children((k, o) => m.envelopes.labels(k, o));
  const acpErrorOf = children((c) => m.acpErrors.labels(c));
  const escrowOf = children((x, o) => m.escrow.labels(x, o));
  const releasedOf = children((k) => m.released.labels(k));
  const sessionEndOf = children((o) => m.sessionsEnded.labels(o));
  const conflictOf = children((s) => m.conflicts.labels(s));
  const pushOf = children((o) => m.push.labels(o));
  const commitOf = children((o) => m.commitSeconds.labels(o));
  const lagOf = children((c) => m.notifyLag.labels(c));
  return {
    registry,
    scrape: () => scraped.metrics(),
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
    negotiationSession: (event) => (event === 'opened' ? m.sessionsOpened.inc() : sessionEndOf(event).inc()),
    acpEnvelope: (kind, code, seconds) => {
      envelopeOf(kind, code === undefined ? 'accepted' : 'rejected').inc();
      if (code !== undefined) acpErrorOf(code).inc();
      if (code === CONSENT_REFUSED) m.consent.inc();
      m.ingestSeconds.observe(seconds);
    },
    acpConsentConflict: (scope) => conflictOf(bounded(CONSENT_SCOPE_NAMES, scope)).inc(),
    escrowOperation: (method, code) =>
      escrowOf(bounded(ESCROW_METHOD_NAMES, method), code === undefined ? 'ok' : String(code)).inc(),
    escrowFunds: (flow, cu) => {
      if (!(cu > 0)) return;
      if (flow === 'locked') m.locked.inc(cu);
      else releasedOf(bounded(PAYOUT_KIND_NAMES, flow)).inc(cu);
    },
    pushDelivery: (outcome) => pushOf(outcome).inc(),
    storeCommit: (operation, seconds) => commitOf(operation).observe(seconds),
    pgNotificationLag: (channel, seconds) => lagOf(channel).observe(seconds),
    readGauge: (gauge, read) => void readers.set(gauge, read),
  };
}

/** How an HTTP status counts as a request outcome (a bounded set). */
function outcomeOf(status: number): string {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'unauthenticated';
  if (status >= 500) return 'server_error';
  return status >= 400 ? 'client_error' : 'ok';
}

/** HTTP methods counted by name; anything else counts as `other`. */
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/**
 * The `GET /metrics` handler: the Prometheus text format of a scrape. With a `token`, a scrape must send
 * `Authorization: Bearer <token>`, else 401 with no metric in the body.
 */
export function scrapeHandler(metrics: HostMetrics, token: string | undefined): express.RequestHandler {
  // The bearer check of every RPC (SHA-256 digests compared in constant time), with the one scrape token.
  const verify = token === undefined ? undefined : bearerVerifier([{ identity: 'metrics', secret: token }]);
  return (req, res, next) => {
    if (verify && 'refused' in verify(req.header('authorization'))) {
      res.set('www-authenticate', 'Bearer realm="metrics"');
      res
        .status(401)
        .json({ error: { code: 401, status: 'UNAUTHENTICATED', message: 'Metrics token required' } });
      return;
    }
    metrics.scrape().then((text) => {
      res.set('cache-control', 'no-store');
      res.type(metrics.registry.contentType).send(text);
    }, next);
  };
}

/**
 * Counts every request once answered and, unless the metrics have a port of their own (`serve: false`),
 * serves `GET /metrics` ({@link scrapeHandler}). Mounted after the Host/Origin check and before the
 * request rate, so a scrape is never rate-limited.
 */
export function mountMetrics(
  app: express.Express,
  options: {
    metrics: HostMetrics;
    token?: string | undefined;
    serve?: boolean;
    bindingOf: (req: express.Request) => string;
  },
): void {
  const { metrics } = options;
  if (options.serve !== false) app.get(METRICS_PATH, scrapeHandler(metrics, options.token));
  app.use((req, res, next) => {
    // Read now: routers mounted at a path rewrite `req.url` while they handle the request.
    const binding = options.bindingOf(req);
    const method = METHODS.has(req.method) ? req.method : 'other';
    res.on('finish', () => metrics.request(binding, method, outcomeOf(res.statusCode)));
    next();
  });
}
