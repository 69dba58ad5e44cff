import express from 'express';
import { AGENT_CARD_PATH, type AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, type AgentExecutor, type PushNotificationStore, type TaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler } from '@a2a-js/sdk/server/express';
import type { Logger } from '../shared/logger.js';
import { A2A_PATHS } from './agent-card.js';
import type { A2ABinding } from './binding.js';
import { bearerAuth, jsonBody, normalizeInbound, userFromRequest } from './http-front.js';
import { CommerceRequestHandler } from './request-handler.js';

export interface MountA2AOptions {
  /** The current card (interface URLs are known once the server listens). */
  card: () => AgentCard;
  bindings: readonly A2ABinding[];
  executor: AgentExecutor;
  taskStore: TaskStore;
  pushStore: PushNotificationStore;
  tokens: readonly string[];
  bodyLimitBytes: number;
  logger: Logger;
}

/**
 * Wires the SDK onto an Express app: one request handler behind JSON-RPC and HTTP+JSON (both with the
 * v0.3 compatibility layer), and the public agent card. In front of each transport: bearer auth, a
 * size-limited JSON parser and the inbound spelling normaliser. Returns the handler (tests use it).
 */
export function mountA2A(app: express.Express, options: MountA2AOptions): CommerceRequestHandler {
  const handler = new CommerceRequestHandler(
    options.card,
    (card) => new DefaultRequestHandler(card, options.taskStore, options.executor, undefined, options.pushStore),
    options.bindings,
    options.logger,
  );
  for (const binding of options.bindings) binding.attach?.({ taskStore: options.taskStore });
  const legacyCompat = { enabled: true };

  // The card stays public (A2A §7: discovery needs no credentials).
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat }));
  app.use(
    A2A_PATHS.jsonRpc,
    bearerAuth(options.tokens, 'jsonrpc'),
    ...jsonBody(options.bodyLimitBytes, 'jsonrpc'),
    normalizeInbound(),
    jsonRpcHandler({ requestHandler: handler, userBuilder: userFromRequest, legacyCompat }),
  );
  app.use(
    A2A_PATHS.rest,
    bearerAuth(options.tokens, 'rest'),
    ...jsonBody(options.bodyLimitBytes, 'rest'),
    normalizeInbound(),
    restHandler({ requestHandler: handler, userBuilder: userFromRequest, legacyCompat }),
  );
  return handler;
}
