import type { SendMessageRequest, StreamResponse, Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { PushNotificationNotSupportedError, RequestMalformedError } from '@a2a-js/sdk/errors';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationSerializer,
  type PushNotificationStore,
  type ServerCallContext,
  type StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { NO_METRICS, type Metrics, type PushOutcome } from '../../shared/metrics.js';
import { traceHeaders } from '../../shared/tracing.js';

/**
 * Push notifications behind an allow-list of webhook origins (A2A §4.3: a webhook URL is a request the host
 * makes on a client's behalf). An empty list means push is off: the card says `pushNotifications: false`
 * and every registration is refused with PushNotificationNotSupportedError (-32003), the spec's error for
 * push features an agent does not support.
 */

/** Whether the host may POST to `url`: an http(s) URL without credentials at an allowed origin. */
export function webhookAllowed(url: string, allow: readonly string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (
    /^https?:$/.test(parsed.protocol) &&
    parsed.username === '' &&
    parsed.password === '' &&
    allow.includes(parsed.origin)
  );
}

/**
 * Refuses a webhook registration the policy does not allow.
 * @throws PushNotificationNotSupportedError when push is off (empty list); RequestMalformedError (-32602)
 *   when the URL is not at an allowed origin.
 */
export function requireAllowedWebhook(url: string, allow: readonly string[]): void {
  if (allow.length === 0)
    throw new PushNotificationNotSupportedError('Push notifications are not supported by this agent.');
  if (!webhookAllowed(url, allow))
    throw new RequestMalformedError("push notification URL is not on this host's allow-list");
}

/**
 * Applies {@link requireAllowedWebhook} to a webhook registered inline with a message
 * (`SendMessageConfiguration.task_push_notification_config`; v0.3's `pushNotificationConfig` arrives here
 * translated by the SDK's compatibility layer). A message without one passes.
 */
export function requireAllowedInlineWebhook(params: SendMessageRequest, allow: readonly string[]): void {
  const config = params.configuration?.taskPushNotificationConfig;
  if (config !== undefined) requireAllowedWebhook(config.url, allow);
}

/** Options of {@link AllowListPushSender}. */
export interface AllowListPushSenderOptions {
  /** Per-delivery timeout (default 5 s). */
  timeoutMs?: number;
  logger?: Logger;
  /** Counts each delivery by outcome (docs/operations.md "Metrics"); default: none. */
  metrics?: Metrics;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const TOKEN_HEADER = 'X-A2A-Notification-Token';

/**
 * Delivers push notifications only to allowed origins. It replaces the SDK's DefaultPushNotificationSender,
 * whose `fetch` follows redirects (a webhook on the list could send the POST, body and credentials, to any
 * origin): here a redirect is never followed, and every stored config is checked again at delivery, so a
 * config stored before its origin left the list (or by a host with another list) gets nothing.
 * Like the SDK's sender: the body is serialised for the wire version the config was registered over
 * (v1.0 or v0.3), deliveries of one task go out in order, and failures are logged, never thrown.
 */
export class AllowListPushSender implements PushNotificationSender {
  private readonly chains = new Map<string, Promise<void>>();
  /** Serialises for v1.0, and for any wire version without a serializer of its own. */
  private readonly v1Serializer = new V1PushNotificationSerializer();
  private readonly serializers = new Map<string, PushNotificationSerializer>([
    ['1.0', this.v1Serializer],
    ['0.3', new V03PushNotificationSerializer()],
  ]);
  private readonly timeoutMs: number;
  private readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(
    private readonly store: PushNotificationStore,
    private readonly allow: readonly string[],
    options: AllowListPushSenderOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.logger = options.logger ?? silentLogger;
    this.metrics = options.metrics ?? NO_METRICS;
  }

  async send(streamResponse: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId) return;
    const configs = await this.load(taskId, context);
    if (configs.length === 0) return;
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous
      .then(() => Promise.all(configs.map((c) => this.deliver(c, { streamResponse, taskId, task }))))
      .then(() => undefined);
    this.chains.set(taskId, next);
    try {
      await next;
    } finally {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    }
  }

  private async load(taskId: string, context: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    if (this.store.loadWithMetadata) return this.store.loadWithMetadata(taskId, context);
    const configs = await this.store.load(taskId, context);
    return configs.map((config) => ({ config, wireVersion: context.requestedVersion }));
  }

  /** Delivers one update to one stored config and counts how that ended. */
  private async deliver(
    stored: StoredPushNotificationConfig,
    update: { streamResponse: StreamResponse; taskId: string; task: Task | undefined },
  ): Promise<void> {
    this.metrics.pushDelivery(await this.post(stored, update));
  }

  /** Posts one update of task `taskId` to one stored config, when its origin is still allowed. */
  private async post(
    stored: StoredPushNotificationConfig,
    update: { streamResponse: StreamResponse; taskId: string; task: Task | undefined },
  ): Promise<PushOutcome> {
    const { streamResponse, taskId, task } = update;
    const { config, wireVersion } = stored;
    if (!webhookAllowed(config.url, this.allow)) {
      this.logger.warn('push.refused', { taskId, reason: 'origin_not_allowed' });
      return 'origin_refused';
    }
    try {
      const serializer = this.serializers.get(wireVersion) ?? this.v1Serializer;
      const { body, contentType } = serializer.serialize(streamResponse, task);
      const response = await fetch(config.url, {
        method: 'POST',
        headers: { 'Content-Type': contentType, ...authHeaders(config), ...traceHeaders() },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
        this.logger.warn('push.refused', {
          taskId,
          reason: 'redirect_not_followed',
          status: response.status,
        });
        return 'redirect_refused';
      }
      if (response.ok) return 'delivered';
      this.logger.warn('push.delivery_failed', { taskId, status: response.status });
      return 'http_error';
    } catch (error) {
      this.logger.warn('push.delivery_failed', { taskId, ...errorFields(error) });
      return 'failed';
    }
  }
}

/** The SDK sender's header rules: `authentication` → Authorization, else the legacy token header. */
function authHeaders(config: TaskPushNotificationConfig): Record<string, string> {
  const auth = config.authentication;
  if (auth?.scheme && auth.credentials) return { Authorization: `${auth.scheme} ${auth.credentials}` };
  return config.token ? { [TOKEN_HEADER]: config.token } : {};
}

function taskIdOf(streamResponse: StreamResponse): string | undefined {
  const payload = streamResponse.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
    case 'message':
      return payload.value.taskId || undefined;
    case undefined:
      return undefined;
  }
}
