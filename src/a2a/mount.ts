import { createHash } from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, type AgentExecutor, type PushNotificationStore, type TaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import type { BearerToken } from '../shared/identity.js';
import { errorFields, type Logger } from '../shared/logger.js';
import { A2A_PATHS } from './agent-card.js';
import type { A2ABinding } from './binding.js';
import { bearerAuth, jsonBody, normalizeInbound, userFromRequest } from './http-front.js';
import { AllowListPushSender } from './push-policy.js';
import { CommerceRequestHandler } from './request-handler.js';
import { ViewingTaskStore } from './task-views.js';

export interface MountA2AOptions {
  /** The current card (interface URLs are known once the server listens). */
  card: () => AgentCard;
  bindings: readonly A2ABinding[];
  executor: AgentExecutor;
  taskStore: TaskStore;
  pushStore: PushNotificationStore;
  tokens: readonly BearerToken[];
  bodyLimitBytes: number;
  /** Origins push-notification webhooks may target; empty = push notifications off. */
  pushAllow?: readonly string[];
  logger: Logger;
}

/**
 * Wires the SDK onto an Express app: one request handler behind JSON-RPC and HTTP+JSON (both with the
 * v0.3 compatibility layer), and the public agent card. In front of each transport: bearer auth, a
 * size-limited JSON parser and the inbound spelling normaliser. Returns the handler (tests use it).
 */
export function mountA2A(app: express.Express, options: MountA2AOptions): CommerceRequestHandler {
  const views = options.bindings.flatMap((b) => b.views ?? []);
  const taskStore = views.length > 0 ? new ViewingTaskStore(options.taskStore, views) : options.taskStore;
  const handler = new CommerceRequestHandler(
    options.card,
    (card) =>
      new DefaultRequestHandler(
        card,
        taskStore,
        guardedExecutor(options.executor, options.logger),
        undefined,
        options.pushStore,
        (options.pushAllow ?? []).length > 0
          ? new AllowListPushSender(options.pushStore, options.pushAllow ?? [], { logger: options.logger })
          : undefined,
      ),
    options.bindings,
    options.logger,
    options.pushAllow ?? [],
  );
  for (const binding of options.bindings) binding.attach?.({ taskStore });
  const legacyCompat = { enabled: true };

  // The card stays public (A2A §7: discovery needs no credentials).
  app.get(`/${AGENT_CARD_PATH}`, v1AgentCard(options.card));
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat }));
  app.use(
    A2A_PATHS.jsonRpc,
    bearerAuth(options.tokens, 'jsonrpc'),
    ...jsonBody(options.bodyLimitBytes, 'jsonrpc'),
    normalizeInbound('jsonrpc'),
    jsonRpcHandler({ requestHandler: handler, userBuilder: userFromRequest, legacyCompat }),
  );
  app.use(
    A2A_PATHS.rest,
    bearerAuth(options.tokens, 'rest'),
    ...jsonBody(options.bodyLimitBytes, 'rest'),
    normalizeInbound('rest'),
    restHandler({ requestHandler: handler, userBuilder: userFromRequest, legacyCompat }),
  );
  return handler;
}

/**
 * Serves the v1.0 card as canonical ProtoJSON. The SDK's card handler serialises its in-memory card with
 * JSON.stringify, which writes oneof fields in their internal `{"$case": …}` form (e.g. securitySchemes),
 * so a v1.0 client cannot read the bearer scheme; we serialise with `AgentCard.toJSON` instead. v0.3
 * requests (no A2A-Version, or 0.x) fall through to the SDK's compat handler, which is correct.
 */
function v1AgentCard(card: () => AgentCard): express.RequestHandler {
  return (req, res, next) => {
    const version = req.header('a2a-version');
    if (version === undefined || version.startsWith('0.')) return next();
    const body = JSON.stringify(AgentCard.toJSON(card()));
    res.setHeader('ETag', `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`);
    res.append('Vary', 'A2A-Version');
    res.setHeader('Cache-Control', 'public, max-age=300');
    if (req.fresh) {
      res.status(304).end();
      return;
    }
    res.type('application/json').send(body);
  };
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
