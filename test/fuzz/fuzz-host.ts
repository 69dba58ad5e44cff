import { demoCapabilities } from '../../src/demo/capabilities.js';
import { anonymousState, snapshot } from '../helpers/acp-builders.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { newEnvelopeId } from '../../src/acpspec/envelope.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import type { Logger } from '../../src/shared/logger.js';
import { startTestHost } from '../helpers/host.js';
import { sendRaw } from '../helpers/wire-reply.js';
import { RECEIVER } from '../acpspec/helpers.js';
import { PUSH_ORIGIN } from './request.js';

/**
 * The host the fuzzer aims at: SQLite (or `db`), both bindings (ACMP with its demo capabilities, ACPspec),
 * plain HTTP with `--no-personal-data` so the ACPspec routes are served without TLS, push notifications
 * allowed to {@link PUSH_ORIGIN} so push configs are stored.
 */
export function startFuzzHost(options: { db?: string; logger?: Logger } = {}) {
  return startTestHost({
    flags: {
      'no-personal-data': true,
      'push-allow': [PUSH_ORIGIN],
      ...(options.db ? { db: options.db } : {}),
    },
    modules: [
      acmpModule({ capabilities: demoCapabilities({ stepMs: 5 }) }),
      acpModule({ producer: { ...RECEIVER } }),
    ],
    ...(options.db ? { migrate: true } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
}

/** Sends one valid request to each endpoint; throws unless each succeeds (the host still serves). */
export async function checkHealthy(baseUrl: string): Promise<void> {
  const message = { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'still there?' }] };
  const v1 = { 'A2A-Version': '1.0' };
  const rpc = await sendRaw(`${baseUrl}/a2a/jsonrpc`, {
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } }),
    headers: v1,
  });
  if ((rpc.body as { result?: unknown } | undefined)?.result === undefined)
    throw new Error(`JSON-RPC SendMessage failed: ${rpc.text}`);
  const rest = await sendRaw(`${baseUrl}/a2a/rest/message:send`, {
    body: JSON.stringify({ message: { ...message, messageId: crypto.randomUUID() } }),
    headers: v1,
  });
  if (rest.status !== 200) throw new Error(`REST message:send failed: ${rest.status} ${rest.text}`);
  const envelope = snapshot({
    transaction_id: `tx-health-${crypto.randomUUID().slice(0, 8)}`,
    envelope_id: newEnvelopeId(),
    state: anonymousState(),
  });
  const acp = await sendRaw(`${baseUrl}/acp/v0.1/envelopes`, {
    body: canonicalJson(envelope),
    headers: { 'content-type': 'application/acp+json' },
  });
  if (acp.status !== 200) throw new Error(`ACPspec envelope failed: ${acp.status} ${acp.text}`);
}
