import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, postJson, startTestHost } from '../helpers/host.js';
import { startWebhook, type Webhook } from '../helpers/webhook.js';

afterEach(cleanup);

const V1 = { 'A2A-Version': '1.0' };

/** A plain text message (the echo executor answers with a task: four events, four deliveries). */
function v1Message() {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] };
}

function v03Message() {
  return {
    messageId: crypto.randomUUID(),
    role: 'user',
    kind: 'message',
    parts: [{ kind: 'text', text: 'hello' }],
  };
}

/**
 * Every way a client can register a webhook inline with a message: one request per wire spelling. The
 * answer is the error the host sent (a JSON-RPC code, v0.3 REST's code, or v1.0 REST's ErrorInfo
 * reason), or 'accepted'.
 */
const INLINE: Record<string, (base: string, url: string) => Promise<unknown>> = {
  'v1.0 JSON-RPC SendMessage': (base, url) =>
    rpcOutcome(
      base,
      'SendMessage',
      { message: v1Message(), configuration: { taskPushNotificationConfig: { url, token: 'hook-token' } } },
      V1,
    ),
  'v1.0 JSON-RPC SendMessage (snake_case)': (base, url) =>
    rpcOutcome(
      base,
      'SendMessage',
      { message: v1Message(), configuration: { task_push_notification_config: { url } } },
      V1,
    ),
  'v1.0 JSON-RPC SendStreamingMessage': (base, url) =>
    rpcOutcome(
      base,
      'SendStreamingMessage',
      { message: v1Message(), configuration: { taskPushNotificationConfig: { url } } },
      V1,
    ),
  'v1.0 REST message:send': (base, url) =>
    restOutcome(
      `${base}/a2a/rest/message:send`,
      { message: v1Message(), configuration: { taskPushNotificationConfig: { url } } },
      V1,
    ),
  'v1.0 REST message:stream': (base, url) =>
    restOutcome(
      `${base}/a2a/rest/message:stream`,
      { message: v1Message(), configuration: { taskPushNotificationConfig: { url } } },
      V1,
    ),
  'v0.3 JSON-RPC message/send': (base, url) =>
    rpcOutcome(base, 'message/send', {
      message: v03Message(),
      configuration: { pushNotificationConfig: { url, token: 'hook-token' } },
    }),
  'v0.3 JSON-RPC message/stream': (base, url) =>
    rpcOutcome(base, 'message/stream', {
      message: v03Message(),
      configuration: { pushNotificationConfig: { url } },
    }),
  'v0.3 REST v1/message:send': (base, url) =>
    restOutcome(`${base}/a2a/rest/v1/message:send`, {
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text: 'hello' }] },
      configuration: { pushNotification: { url } },
    }),
};

async function rpcOutcome(
  base: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await postJson(`${base}/a2a/jsonrpc`, { jsonrpc: '2.0', id: 1, method, params }, headers);
  const error = (res.body as { error?: { code?: unknown } }).error;
  return error ? error.code : res.status === 200 ? 'accepted' : res.status;
}

async function restOutcome(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<unknown> {
  const res = await postJson(url, body, headers);
  if (res.status < 300) return 'accepted';
  const answer = res.body as { code?: number; error?: { details?: { reason?: string }[] } };
  return answer.error?.details?.[0]?.reason ?? answer.code ?? res.status;
}

/** Deliveries the host makes to `hook` for a task whose config it accepted on `allowed` (the control). */
async function deliveredToControl(base: string, allowed: Webhook): Promise<void> {
  expect(await INLINE['v1.0 JSON-RPC SendMessage']!(base, allowed.url)).toBe('accepted');
  await allowed.received(4);
}

describe('push notifications: every path that registers a webhook obeys the allow-list (A2A §4.3)', () => {
  it.each(Object.keys(INLINE))(
    '%s: refuses an inline webhook off the list, and it never gets a POST',
    async (name) => {
      const allowed = await startWebhook();
      const offList = await startWebhook();
      const host = await startTestHost({ flags: { 'push-allow': [allowed.origin] } });
      const outcome = await INLINE[name]!(host.url, offList.url);
      expect([-32602, 'INVALID_PARAMS']).toContain(outcome);
      await deliveredToControl(host.url, allowed);
      expect(offList.posts).toHaveLength(0);
    },
  );

  it.each(Object.keys(INLINE))(
    '%s: with push off, an inline webhook gets PushNotificationNotSupportedError',
    async (name) => {
      const hook = await startWebhook();
      const host = await startTestHost();
      const outcome = await INLINE[name]!(host.url, hook.url);
      expect([-32003, 'PUSH_NOTIFICATION_NOT_SUPPORTED']).toContain(outcome);
      expect(hook.posts).toHaveLength(0);
    },
  );

  it('delivers every event of the task to an inline webhook on the list, with its token', async () => {
    const hook = await startWebhook();
    const host = await startTestHost({ flags: { 'push-allow': [hook.origin] } });
    await deliveredToControl(host.url, hook);
    const last = hook.posts[3]!;
    expect(last.headers['x-a2a-notification-token']).toBe('hook-token');
    expect(JSON.parse(last.body)).toMatchObject({
      statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } },
    });
  });

  it('does not follow a redirect from a webhook on the list to an origin off it', async () => {
    const offList = await startWebhook();
    const redirecting = await startWebhook((res, index) => {
      if (index === 0) res.writeHead(307, { location: `${offList.url}?from=redirect` }).end();
      else res.writeHead(200).end();
    });
    const host = await startTestHost({ flags: { 'push-allow': [redirecting.origin] } });
    expect(await INLINE['v1.0 JSON-RPC SendMessage']!(host.url, redirecting.url)).toBe('accepted');
    // Deliveries of one task go out one after another: the second POST means the first one is over.
    await redirecting.received(2);
    expect(offList.posts).toHaveLength(0);
  });

  it('refuses CreateTaskPushNotificationConfig with push off as PushNotificationNotSupportedError', async () => {
    const host = await startTestHost();
    const params = { taskId: 'any-task', url: 'http://127.0.0.1:9/hook' };
    expect(await rpcOutcome(host.url, 'CreateTaskPushNotificationConfig', params, V1)).toBe(-32003);
    expect(
      await rpcOutcome(host.url, 'tasks/pushNotificationConfig/set', {
        taskId: 'any-task',
        pushNotificationConfig: { url: params.url },
      }),
    ).toBe(-32003);
  });
});
