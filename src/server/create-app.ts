import { mountMetrics, type HostMetrics } from './metrics.js';
import { mountHealth, type Readiness } from './health.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { AgentCard, AgentExecutor, AgentSkill } from '../a2a/binding.js';

import { A2A_PATHS, buildAgentCard } from '../a2a/host/agent-card.js';
import type { A2ABinding, PlainExecutor } from '../a2a/binding.js';
import type { DidCallerPolicy } from '../a2a/host/caller-auth.js';
import { signAgentCard } from '../a2a/card-signature.js';
import { EchoExecutor } from '../a2a/host/echo-executor.js';
import { bearerAuth, callerOf } from '../a2a/host/http-front.js';
import { LEAN_PATHS, mountA2A } from '../a2a/host/mount.js';
import { appServerClasses, leanFront, type AppServerClasses } from '../a2a/host/lean-front.js';
import type { CommerceRequestHandler } from '../a2a/host/request-handler.js';
import { requestRateGuard } from '../a2a/host/request-rate-guard.js';
import type { WireShape } from '../a2a/host/wire-errors.js';
import { ACP_HTTP_PREFIX } from '../acpspec/constants.js';
import { MCP_PATH } from '../mcp/acmp-extension.js';
import type { RequestLimiter } from '../shared/request-rate.js';
import { routeSdkConsole } from '../a2a/host/sdk-scope.js';
import type { SdkStores } from '../a2a/host/sdk-stores.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Signer } from '../acmp/identity/index.js';
import type { BearerToken } from '../shared/identity.js';
import { LocalError } from '../shared/errors.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import type { DidDocument } from '../acmp/identity/did-document.js';
import { WELL_KNOWN_DID_PATH } from '../acmp/identity/did-web.js';
import { LOCALHOST_ACCESS, type HostAccess } from './allowed-hosts.js';
import { hostGuard } from './host-guard.js';
import type { ModuleParts } from './module.js';
import { mountConsole, type ConsoleDeps } from './console/console-routes.js';

/** Who the agent says it is on its card. */
export interface AgentIdentity {
  name: string;
  description: string;
  version: string;
  organization?: string;
}

const DEFAULT_IDENTITY: AgentIdentity = {
  name: 'a2a-commerce host',
  description:
    'Commerce protocols over A2A: ACMP (compute market) and ACPspec (automotive transaction state).',
  version: '0.1.0',
};

export interface AppDeps {
  /** Public base URL (`https://127.0.0.1:8443`); read per request because it is known only after listen. */
  baseUrl: () => string;
  /** The gRPC interface's `host:port` once it listens; absent or undefined: the card lists no gRPC. */
  grpcUrl?: () => string | undefined;
  tokens: readonly BearerToken[];
  /** Callers identified by DID tokens (the host's one policy, shared with gRPC); absent: tokens only. */
  didCallers?: DidCallerPolicy | undefined;
  /**
   * The host's signer over its newest key, read per card request so a rotated key signs from then on
   * (A2A §8.4); absent, or answering undefined: the card is served unsigned.
   */
  signer?: (() => Signer | undefined) | undefined;
  bodyLimitBytes: number;
  /** Origins push-notification webhooks may target; empty or absent = push notifications off. */
  pushAllow?: readonly string[];
  stores: SdkStores;
  /** Started modules (bindings, HTTP routes). */
  parts?: readonly ModuleParts[];
  /** Executor for plain A2A messages no binding claims (default: {@link EchoExecutor}). */
  executor?: AgentExecutor;
  identity?: AgentIdentity;
  /** The host's DID document, served at `/.well-known/did.json` (did:web; docs/acmp-identity.md). */
  didDocument?: () => DidDocument;
  logger?: Logger;
  /** Dates the card's `Last-Modified` (default: the system clock). */
  clock?: Clock;
  /** Host names and origins requests may use (src/server/allowed-hosts.ts); default: localhost only. */
  access?: HostAccess;
  /** The request rate per caller on every HTTP route (absent: none); the gRPC front shares it. */
  rate?: RequestLimiter | undefined;
  /** `/metrics` and the request counts (src/server/metrics.ts); absent: no metrics. */
  metrics?: { metrics: HostMetrics; token?: string | undefined; serve?: boolean };
  /** `/healthz` and `/readyz` (src/server/health.ts); absent: no probes. */
  readiness?: Readiness | undefined;
  /** The lean invoke path (src/a2a/host/lean-invoke.ts); default on, off only to compare it with the SDK's path. */
  leanInvoke?: boolean | undefined;
  /** The operator console at `/console` (docs/console.md); absent: not served. */
  console?: Omit<ConsoleDeps, 'logger' | 'clock'> | undefined;
}

export interface App {
  app: express.Express;
  /**
   * The request listener to serve: the app, with the lean front ahead of it for `POST` to the A2A sends'
   * paths and the MCP endpoint unless the lean path is off (src/a2a/host/lean-front.ts).
   */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** The server's request and response classes for the lean front (none without it). */
  serverClasses: AppServerClasses | undefined;
  handler: CommerceRequestHandler;
  card: () => AgentCard;
}

/**
 * Builds the host's Express app without listening: the `Host`/`Origin` check, module HTTP routes, the A2A transports and card,
 * then a JSON 404 and a last-resort error handler that never sends a stack trace.
 */
export function createApp(deps: AppDeps): App {
  const logger = deps.logger ?? silentLogger;
  const parts = deps.parts ?? [];
  const bindings = parts.map((p) => p.binding).filter((b): b is A2ABinding => b !== undefined);
  const plain = plainExecutorOf(parts);
  const cards = new AgentCardCache(deps, bindings, plain?.skills ?? []);
  const card = (): AgentCard => cards.current().card;

  // The SDK takes no logger: inside A2A requests its console lines go to ours (src/a2a/host/sdk-scope.ts).
  routeSdkConsole(console);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(hostGuard(deps.access ?? LOCALHOST_ACCESS, logger));
  // Probes next: never rate-limited, authenticated or counted as requests.
  if (deps.readiness) mountHealth(app, deps.readiness);
  if (deps.metrics) mountMetrics(app, { ...deps.metrics, bindingOf: (req) => routeOfRequest(req).binding });
  // After the Host check, before every route, authentication and body: the request rate per caller
  // (docs/host.md "Limits per caller").
  if (deps.rate)
    app.use(requestRateGuard({ limiter: deps.rate, tokens: deps.tokens, logger, routeOf: routeOfRequest }));
  const guards = {
    auth: bearerAuth(deps.tokens, 'rest', deps.didCallers),
    callerOf,
    bodyLimitBytes: deps.bodyLimitBytes,
  };
  if (deps.didDocument) serveDidDocument(app, deps.didDocument);
  if (deps.console) mountConsole(app, { ...deps.console, logger, clock: deps.clock ?? systemClock });
  for (const part of parts) part.mountHttp?.(app, guards);
  const handler = mountA2A(app, {
    card,
    servedCard: () => cards.served(),
    cardChangedAt: () => cards.current().changedAt,
    bindings,
    executor: deps.executor ?? plain?.executor ?? new EchoExecutor(),
    taskStore: deps.stores.taskStore,
    pushStore: deps.stores.pushStore,
    tokens: deps.tokens,
    didCallers: deps.didCallers,
    bodyLimitBytes: deps.bodyLimitBytes,
    pushAllow: deps.pushAllow,
    logger,
    metrics: deps.metrics?.metrics,
    leanInvoke: deps.leanInvoke,
  });
  app.use((_req, res) => {
    res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'Not found' } });
  });
  app.use(errorMiddleware((err, res) => answerError(err, res, logger)));
  const lean = deps.leanInvoke !== false;
  // The MCP endpoint's POSTs too: one route behind the host's own layers, like the A2A sends.
  const listener = lean ? leanFront(app, [...LEAN_PATHS, MCP_PATH]) : app;
  return { app, listener, serverClasses: lean ? appServerClasses(app) : undefined, handler, card };
}

/**
 * The one module executor for plain A2A messages, if a module brings one.
 * @throws LocalError `CONFIG_INVALID` when two modules do: which would answer plain A2A is then unclear.
 */
function plainExecutorOf(parts: readonly ModuleParts[]): PlainExecutor | undefined {
  const plain = parts.flatMap((p) => (p.plainExecutor ? [p.plainExecutor] : []));
  if (plain.length > 1)
    throw new LocalError(
      'CONFIG_INVALID',
      'Only one module may serve the plain A2A messages no binding claims',
    );
  return plain[0];
}

/** How long verifiers may keep the DID document (docs/acmp-identity.md "Revocation latency"). */
const DID_DOCUMENT_MAX_AGE_S = 60;

/** did:web resolution (Layer 7 §2.1): the document, public like the card, read afresh per request. */
function serveDidDocument(app: express.Express, document: () => DidDocument): void {
  app.get(WELL_KNOWN_DID_PATH, (_req, res) => {
    res.set('cache-control', `public, max-age=${DID_DOCUMENT_MAX_AGE_S}`);
    res.type('application/did+json').send(JSON.stringify(document()));
  });
}

/** Which binding an HTTP request is for, and the error shape it answers in. */
function routeOfRequest(req: express.Request): { binding: string; shape: WireShape } {
  const path = req.path;
  if (path.startsWith(A2A_PATHS.jsonRpc)) return { binding: 'jsonrpc', shape: 'jsonrpc' };
  if (path.startsWith(MCP_PATH)) return { binding: 'mcp', shape: 'jsonrpc' };
  if (path.startsWith(ACP_HTTP_PREFIX)) return { binding: 'acp-http', shape: 'rest' };
  return { binding: path.startsWith(A2A_PATHS.rest) ? 'rest' : 'http', shape: 'rest' };
}

/**
 * The agent card for the current base URL and gRPC address, rebuilt (and re-dated for `Last-Modified`)
 * only when either changes: both are known only once the host listens.
 */
class AgentCardCache {
  private cached:
    { url: string; grpcUrl: string | undefined; card: AgentCard; changedAt: number } | undefined;
  /** The signed form of one built card (signing is asynchronous; a failed signing is not kept). */
  private signed: { card: AgentCard; kid: string; served: Promise<AgentCard> } | undefined;
  private readonly clock: Clock;

  constructor(
    private readonly deps: Pick<
      AppDeps,
      'baseUrl' | 'grpcUrl' | 'identity' | 'clock' | 'tokens' | 'pushAllow' | 'didCallers' | 'signer'
    >,
    private readonly bindings: readonly A2ABinding[],
    private readonly plainSkills: readonly AgentSkill[],
  ) {
    this.clock = deps.clock ?? systemClock;
  }

  current(): { card: AgentCard; changedAt: number } {
    const url = this.deps.baseUrl();
    const grpcUrl = this.deps.grpcUrl?.();
    if (this.cached?.url !== url || this.cached.grpcUrl !== grpcUrl)
      this.cached = { url, grpcUrl, changedAt: this.clock.now(), card: this.build(url, grpcUrl) };
    return this.cached;
  }

  /** The card as served: signed with the host's key when it has one (A2A §8.4). */
  served(): Promise<AgentCard> {
    const { card } = this.current();
    const signer = this.deps.signer?.();
    if (!signer) return Promise.resolve(card);
    if (this.signed?.card !== card || this.signed.kid !== signer.verificationMethod) {
      const served = signAgentCard(card, signer);
      this.signed = { card, kid: signer.verificationMethod, served };
      served.catch(() => {
        if (this.signed?.served === served) this.signed = undefined;
      });
    }
    return this.signed.served;
  }

  private build(url: string, grpcUrl: string | undefined): AgentCard {
    return buildAgentCard({
      ...(this.deps.identity ?? DEFAULT_IDENTITY),
      baseUrl: url,
      grpcUrl,
      extensions: this.bindings.flatMap((b) => [b.extension, ...(b.extraExtensions ?? [])]),
      skills: [...this.bindings.flatMap((b) => b.skills), ...this.plainSkills],
      bearer: this.deps.tokens.length > 0,
      didCallers: this.deps.didCallers !== undefined,
      pushNotifications: (this.deps.pushAllow ?? []).length > 0,
    });
  }
}

/**
 * Express error middleware from a handler of the error and the response. Express tells error middleware
 * from request middleware by the number of parameters the function declares (`fn.length === 4`, router's
 * `Layer.handleError`), so this one function must declare four: the framework's contract, not ours.
 */
function errorMiddleware(handle: (err: unknown, res: express.Response) => void): express.ErrorRequestHandler {
  // eslint-disable-next-line max-params -- Express recognises error middleware by its four parameters.
  return (err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction): void =>
    handle(err, res);
}

/** The last-resort answer: Express's own 4xx refusals keep their status; anything else is a logged 500. */
function answerError(err: unknown, res: express.Response, logger: Logger): void {
  const status = clientErrorStatus(err);
  if (status === undefined) logger.error('http.unhandled_error', errorFields(err));
  if (res.headersSent) {
    res.end();
    return;
  }
  if (status !== undefined) {
    // Express's own refusals (a path segment that is not valid percent-encoding, …) stay 4xx.
    res.status(status).json({
      error: { code: status, status: STATUS_NAMES[status] ?? 'INVALID_ARGUMENT', message: 'Bad request' },
    });
    return;
  }
  res.status(500).json({ error: { code: 500, status: 'INTERNAL', message: 'Internal error' } });
}

/** google.rpc code names of the 4xx statuses that are not INVALID_ARGUMENT. */
const STATUS_NAMES: Record<number, string> = {
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  413: 'RESOURCE_EXHAUSTED',
};

/** The 4xx status of an error Express or its parsers raised about the request (http-errors), if any. */
function clientErrorStatus(err: unknown): number | undefined {
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}
