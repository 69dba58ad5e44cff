import { createHash } from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, AgentCard } from '@a2a-js/sdk';
import {
  DefaultRequestHandler,
  type AgentExecutor,
  type PushNotificationStore,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import type { BearerToken } from '../../shared/identity.js';
import { errorFields, type Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import { A2A_PATHS, CARD_MAX_AGE_S } from './agent-card.js';
import type { A2ABinding } from '../binding.js';
import type { DidCallerPolicy } from './caller-auth.js';
import { bearerAuth, normalizeInbound, userFromRequest } from './http-front.js';
import { jsonMediaTypes, legacyExtensionsHeader } from './interop-headers.js';
import { jsonBody } from './json-body.js';
import { leanInvoke } from './lean-invoke.js';
import { leanJsonRpc } from './lean-jsonrpc.js';
import { LEAN_REST_ROUTES, leanRest } from './lean-rest.js';
import { AllowListPushSender } from './push-policy.js';
import { jsonRpcEdge, restEdge } from './request-edge.js';
import { paramsEdge } from './request-params.js';
import { CommerceRequestHandler } from './request-handler.js';
import { observedHandler, sdkScope } from './sdk-scope.js';
import { ViewingTaskStore } from '../task-views.js';

export interface MountA2AOptions {
  /** The current card (interface URLs are known once the server listens). */
  card: () => AgentCard;
  /** The card as served (signed when the host has a key, A2A §8.4); default {@link card}. */
  servedCard?: () => Promise<AgentCard>;
  /** When the current card last changed (ms since the epoch): the card's `Last-Modified`. */
  cardChangedAt: () => number;
  bindings: readonly A2ABinding[];
  executor: AgentExecutor;
  taskStore: TaskStore;
  pushStore: PushNotificationStore;
  tokens: readonly BearerToken[];
  /** Callers identified by DID tokens, next to the static tokens (absent: tokens only). */
  didCallers?: DidCallerPolicy | undefined;
  bodyLimitBytes: number;
  /** Origins push-notification webhooks may target; empty = push notifications off. */
  pushAllow?: readonly string[];
  logger: Logger;
  /** Counts push deliveries by outcome (docs/operations.md "Metrics"); absent: none. */
  metrics?: Metrics | undefined;
  /** The lean invoke path (src/a2a/host/lean-invoke.ts); default on. Off: every request takes the SDK's path (tests). */
  leanInvoke?: boolean | undefined;
}

/**
 * Wires the SDK onto an Express app: one request handler behind JSON-RPC and HTTP+JSON (both with the
 * v0.3 compatibility layer), and the public agent card. In front of each transport: bearer auth, the
 * edge checks (body, request object, params) and the inbound spelling normaliser. Returns the handler
 * (tests use it).
 */
export function mountA2A(app: express.Express, options: MountA2AOptions): CommerceRequestHandler {
  const views = options.bindings.flatMap((b) =>
    b.views === undefined ? [] : 'load' in b.views ? [b.views] : b.views,
  );
  const taskStore = views.length > 0 ? new ViewingTaskStore(options.taskStore, views) : options.taskStore;
  const pushSender =
    (options.pushAllow ?? []).length > 0
      ? new AllowListPushSender(options.pushStore, options.pushAllow ?? [], {
          logger: options.logger,
          ...(options.metrics ? { metrics: options.metrics } : {}),
        })
      : undefined;
  const handler = new CommerceRequestHandler({
    cardSource: options.card,
    createInner: (card) =>
      new DefaultRequestHandler(
        card,
        taskStore,
        guardedExecutor(options.executor, options.logger),
        undefined,
        options.pushStore,
        pushSender,
      ),
    bindings: options.bindings,
    logger: options.logger,
    pushAllow: options.pushAllow ?? [],
  });
  for (const binding of options.bindings)
    binding.attach?.({ taskStore, ...(pushSender ? { pushSender } : {}) });
  const legacyCompat = { enabled: true };
  const lean = options.leanInvoke ?? true;

  // The card stays public (A2A §7: discovery needs no credentials). Both shapes are cached alike
  // (docs/host.md "The agent card"): one max-age, an ETag, and Last-Modified set before either handler
  // runs, so the SDK's v0.3 handler also answers If-Modified-Since with 304.
  // Only the v1.0 shape is signed (docs/acmp-identity.md "Signed agent card"): §8.4.1 canonicalises the
  // v1.0 form, and the SDK's v0.3 shape cannot be turned back into it, so a copied signature would
  // verify for nobody.
  const servedCard = options.servedCard ?? (() => Promise.resolve(options.card()));
  const unsignedCard = (): Promise<AgentCard> => Promise.resolve(options.card());
  app.get(`/${AGENT_CARD_PATH}`, cardLastModified(options.cardChangedAt), v1AgentCard(servedCard));
  app.use(
    `/${AGENT_CARD_PATH}`,
    agentCardHandler({ agentCardProvider: unsignedCard, legacyCompat, cache: { maxAge: CARD_MAX_AGE_S } }),
  );
  // The edge (docs/host.md "Bad input"): auth, then the body, the request object and its params are
  // checked before the SDK reads them; the SDK runs inside a scope that routes its diagnostics.
  const sdkHandler = observedHandler(handler);
  // First the interop spellings (docs/host.md "Interop"), so refusals are answered in the same media type.
  app.use(
    A2A_PATHS.jsonRpc,
    legacyExtensionsHeader(),
    jsonMediaTypes('jsonrpc'),
    bearerAuth(options.tokens, 'jsonrpc', options.didCallers),
    ...jsonBody(options.bodyLimitBytes, 'jsonrpc'),
    jsonRpcEdge(),
    normalizeInbound('jsonrpc'),
    paramsEdge('jsonrpc'),
    leanInvoke(handler, leanJsonRpc, { enabled: lean }),
    sdkScope(options.logger, 'jsonrpc'),
    jsonRpcHandler({ requestHandler: sdkHandler, userBuilder: userFromRequest, legacyCompat }),
  );
  app.use(
    A2A_PATHS.rest,
    legacyExtensionsHeader(),
    jsonMediaTypes('rest'),
    bearerAuth(options.tokens, 'rest', options.didCallers),
    ...jsonBody(options.bodyLimitBytes, 'rest'),
    restEdge(),
    normalizeInbound('rest'),
    paramsEdge('rest'),
    leanInvoke(handler, leanRest, { enabled: lean }),
    sdkScope(options.logger, 'rest'),
    restHandler({ requestHandler: sdkHandler, userBuilder: userFromRequest, legacyCompat }),
  );
  return handler;
}

/**
 * The paths the lean invoke path serves (docs/acmp-a2a-binding.md "The lean invoke path"): the host's
 * request listener takes a `POST` to exactly one of them past Express's router (src/a2a/host/lean-front.ts).
 */
export const LEAN_PATHS: readonly string[] = [
  A2A_PATHS.jsonRpc,
  A2A_PATHS.rest + LEAN_REST_ROUTES.send,
  A2A_PATHS.rest + LEAN_REST_ROUTES.stream,
];

/** Sets the card's `Last-Modified` (HTTP dates have whole seconds). */
function cardLastModified(changedAt: () => number): express.RequestHandler {
  return (_req, res, next) => {
    res.setHeader('Last-Modified', new Date(Math.floor(changedAt() / 1000) * 1000).toUTCString());
    next();
  };
}

/**
 * Serves the v1.0 card as canonical ProtoJSON. The SDK's card handler serialises its in-memory card with
 * JSON.stringify, which writes oneof fields in their internal `{"$case": …}` form (e.g. securitySchemes),
 * so a v1.0 client cannot read the bearer scheme; we serialise with `AgentCard.toJSON` instead. v0.3
 * requests (no A2A-Version, or 0.x) fall through to the SDK's compat handler, which is correct.
 */
function v1AgentCard(card: () => Promise<AgentCard>): express.RequestHandler {
  return (req, res, next) => {
    const version = req.header('a2a-version');
    if (version === undefined || version.startsWith('0.')) return next();
    card().then((current) => sendV1Card(req, res, current), next);
  };
}

function sendV1Card(req: express.Request, res: express.Response, card: AgentCard): void {
  const body = JSON.stringify(AgentCard.toJSON(card));
  res.setHeader('ETag', `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`);
  res.append('Vary', 'A2A-Version');
  res.setHeader('Cache-Control', `public, max-age=${CARD_MAX_AGE_S}`);
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  res.type('application/json').send(body);
}

/**
 * The SDK turns an executor's thrown error into a failed task whose status message is the error's text
 * (and prints it). An executor is application code whose errors may name SQL, secrets or personal data,
 * so its failures are logged by class and code only and reach the SDK as a generic `Internal error`.
 */
function guardedExecutor(inner: AgentExecutor, logger: Logger): AgentExecutor {
  const guard = async (what: string, call: () => Promise<void>): Promise<void> => {
    try {
      await call();
    } catch (error) {
      logger.error('a2a.executor_failed', { phase: what, ...errorFields(error) });
      throw new Error('Internal error');
    }
  };
  return {
    execute: (context, bus) => guard('execute', () => inner.execute(context, bus)),
    cancelTask: (taskId, bus) => guard('cancel', () => inner.cancelTask(taskId, bus)),
  };
}
