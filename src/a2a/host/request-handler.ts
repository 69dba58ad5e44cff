import type { AgentCard, Message, StreamResponse, Task } from '@a2a-js/sdk';
import type {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { A2AError, ExtensionSupportRequiredError, RequestMalformedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { A2ABinding, BindingCall } from '../binding.js';
import { decodeMessage, type InboundMessage } from '../part-codec.js';
import { requireAllowedInlineWebhook, requireAllowedWebhook } from './push-policy.js';
import { endRefused, startRequestSpan, traceCall, traceStream } from './request-span.js';
import { requireJudged } from './wire-limits.js';
import { quoteId } from '../../shared/id-rules.js';
import { errorFields, silentLogger, type Logger } from '../../shared/logger.js';
import { withSpan } from '../../shared/tracing.js';

/** What {@link CommerceRequestHandler} serves. */
export interface CommerceRequestHandlerOptions {
  /**
   * The current card; its interface URLs are known only once the server listens, so the card is read per
   * request and the SDK's handler is built on first use.
   */
  readonly cardSource: () => AgentCard;
  /** Builds the SDK handler that serves everything no binding claims. */
  readonly createInner: (card: AgentCard) => A2ARequestHandler;
  readonly bindings: readonly A2ABinding[];
  readonly logger?: Logger | undefined;
  /** Origins push-notification webhooks may target (A2A §4.3; empty: push off). See push-policy.ts. */
  readonly pushAllow?: readonly string[];
}

/**
 * The host's request handler: the SDK's {@link A2ARequestHandler} contract, delegating to the SDK's
 * DefaultRequestHandler except for messages a binding claims. Bindings own their tasks end to end
 * (a binding may let the client choose the task id, which A2A core and the SDK refuse), so routing
 * happens here, before the SDK's handler sees the message, rather than by patching the SDK.
 *
 * Extensions (A2A §4.6): every requested extension this host supports is activated, so the response's
 * `A2A-Extensions` header echoes it; a `required: true` extension the client did not request is refused
 * with ExtensionSupportRequiredError (-32008) before any routing.
 *
 * Errors: the SDK puts a thrown error's message on the wire, so every call goes through {@link guard}:
 * A2A errors pass; anything else is logged by class and code only and replaced by a generic internal
 * error (-32603 / HTTP 500), never leaking SQL, stack traces or payload text.
 */
export class CommerceRequestHandler implements A2ARequestHandler {
  private readonly supported: ReadonlySet<string>;
  private readonly decodings = new WeakMap<Message, InboundMessage>();
  private innerHandler: A2ARequestHandler | undefined;

  private readonly cardSource: () => AgentCard;
  private readonly createInner: (card: AgentCard) => A2ARequestHandler;
  private readonly bindings: readonly A2ABinding[];
  private readonly logger: Logger;
  private readonly pushAllow: readonly string[];

  constructor(options: CommerceRequestHandlerOptions) {
    this.cardSource = options.cardSource;
    this.createInner = options.createInner;
    this.bindings = options.bindings;
    this.logger = options.logger ?? silentLogger;
    this.pushAllow = options.pushAllow ?? [];
    this.supported = new Set(this.cardSource().capabilities?.extensions.map((e) => e.uri) ?? []);
  }

  private get inner(): A2ARequestHandler {
    this.innerHandler ??= this.createInner(this.cardSource());
    return this.innerHandler;
  }

  private get card(): AgentCard {
    return this.cardSource();
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.cardSource());
  }

  getAuthenticatedExtendedAgentCard(
    params: GetExtendedAgentCardRequest,
    context: ServerCallContext,
  ): Promise<AgentCard> {
    return this.guard({ method: 'GetExtendedAgentCard', params, context }, () =>
      this.inner.getAuthenticatedExtendedAgentCard(params, context),
    );
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return this.guard({ method: 'SendMessage', params, context }, () => {
      requireAllowedInlineWebhook(params, this.pushAllow);
      const routed = this.route(params, context);
      return routed ? routed.binding.sendMessage(routed.call) : this.inner.sendMessage(params, context);
    });
  }

  /**
   * Routing (required-extension check, activation, choice of binding) happens when the call is made, not
   * on the first read of the stream: the transport writes the `A2A-Extensions` response header before it
   * starts reading, and a refusal must be an error response rather than a broken stream.
   */
  sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const method = 'SendStreamingMessage';
    const span = startRequestSpan(method, params, context);
    let routed: ReturnType<CommerceRequestHandler['route']>;
    try {
      requireJudged(method, params);
      requireAllowedInlineWebhook(params, this.pushAllow);
      routed = this.route(params, context);
    } catch (error) {
      endRefused(span, error);
      throw this.sanitize(method, error);
    }
    // Made inside the span: whatever the stream starts when it is made descends from it.
    const source = withSpan(span, () =>
      routed ? routed.binding.sendMessageStream(routed.call) : this.inner.sendMessageStream(params, context),
    );
    return this.stream(traceStream(span, source), method);
  }

  private async *stream(
    source: AsyncGenerator<StreamResponse, void, undefined>,
    method: string,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* source;
    } catch (error) {
      throw this.sanitize(method, error);
    }
  }

  /**
   * Whether a message goes to the lean invoke path (src/a2a/host/lean-invoke.ts): a binding claims it — the
   * one {@link route} would choose — and the client requested that binding's extension. Messages no binding
   * claims are the SDK's handler's, and stay on the SDK's path.
   */
  isLean(params: SendMessageRequest, requestedExtensions: readonly string[]): boolean {
    if (!params.message) return false;
    const binding = this.bindingFor(this.decoded(params.message));
    return binding !== undefined && requestedExtensions.includes(binding.extension.uri);
  }

  /** A message decoded once per request: the lean decision and the routing read the same decoding. */
  private decoded(message: Message): InboundMessage {
    let decoded = this.decodings.get(message);
    if (decoded === undefined) {
      decoded = decodeMessage(message);
      this.decodings.set(message, decoded);
    }
    return decoded;
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    this.activate(context);
    return this.guard({ method: 'GetTask', params, context }, () => this.inner.getTask(params, context));
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return this.guard({ method: 'ListTasks', params, context }, () => this.inner.listTasks(params, context));
  }

  async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    this.activate(context);
    return this.guard({ method: 'CancelTask', params, context }, async () => {
      for (const binding of this.bindings) {
        const task = await binding.cancelTask?.(params.id, context);
        if (task) return task;
      }
      return this.inner.cancelTask(params, context);
    });
  }

  createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard({ method: 'CreateTaskPushNotificationConfig', params, context }, () => {
      requireAllowedWebhook(params.url, this.pushAllow);
      return this.inner.createTaskPushNotificationConfig(params, context);
    });
  }

  getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    return this.guard({ method: 'GetTaskPushNotificationConfig', params, context }, () =>
      this.inner.getTaskPushNotificationConfig(params, context),
    );
  }

  listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
    context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.guard({ method: 'ListTaskPushNotificationConfigs', params, context }, () =>
      this.inner.listTaskPushNotificationConfigs(params, context),
    );
  }

  deleteTaskPushNotificationConfig(
    params: DeleteTaskPushNotificationConfigRequest,
    context: ServerCallContext,
  ): Promise<void> {
    return this.guard({ method: 'DeleteTaskPushNotificationConfig', params, context }, () =>
      this.inner.deleteTaskPushNotificationConfig(params, context),
    );
  }

  resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const method = 'SubscribeToTask';
    const span = startRequestSpan(method, params, context);
    try {
      requireJudged(method, params);
    } catch (error) {
      endRefused(span, error);
      throw this.sanitize(method, error);
    }
    // Activated now, before the transport writes the response header.
    this.activate(context);
    return this.stream(traceStream(span, this.subscribe(params, context)), method);
  }

  private async *subscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    for (const binding of this.bindings) {
      const stream = await binding.resubscribe?.(params.id, context);
      if (stream) {
        yield* stream;
        return;
      }
    }
    yield* this.inner.resubscribe(params, context);
  }

  /**
   * Judges the request (src/a2a/host/wire-limits.ts, the same on every transport), then makes the call inside
   * the call's server span (src/a2a/host/request-span.ts).
   */
  private async guard<T>(
    request: { method: string; params: object; context: ServerCallContext },
    call: () => Promise<T>,
  ): Promise<T> {
    const { method, params, context } = request;
    const span = startRequestSpan(method, params, context);
    try {
      return await traceCall(span, () => {
        requireJudged(method, params);
        return call();
      });
    } catch (error) {
      throw this.sanitize(method, error);
    }
  }

  /**
   * A2A errors pass through (quoting at most a prefix of an id); anything else becomes a generic internal
   * error (cause logged, not sent).
   */
  private sanitize(method: string, error: unknown): unknown {
    if (error instanceof A2AError) {
      // The SDK's texts quote ids whole ("Task not found: <id>"): at most a prefix goes out.
      error.message = error.message.replace(/\S{65,}/g, quoteId);
      return error;
    }
    this.logger.error('a2a.internal_error', { method, ...errorFields(error) });
    return new Error('Internal error');
  }

  /** Activates the requested extensions this host supports (echoed in the response header). */
  private activate(context: ServerCallContext): void {
    for (const uri of context.requestedExtensions ?? []) {
      if (this.supported.has(uri)) context.addActivatedExtension(uri);
    }
  }

  /** A2A §4.6: refuse a message when a required extension was not requested. */
  private checkRequired(context: ServerCallContext): void {
    const requested = new Set(context.requestedExtensions ?? []);
    const missing = (this.card.capabilities?.extensions ?? []).filter(
      (e) => e.required && !requested.has(e.uri),
    );
    if (missing.length > 0) {
      throw new ExtensionSupportRequiredError(
        `Client must declare support for required extensions: ${missing.map((e) => e.uri).join(', ')}`,
      );
    }
  }

  private bindingFor(message: InboundMessage): A2ABinding | undefined {
    return (
      this.bindings.find((b) => b.narrowClaim === true && b.claims(message)) ??
      this.bindings.find((b) => b.claims(message))
    );
  }

  private route(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): { binding: A2ABinding; call: BindingCall } | undefined {
    if (!params.message) throw new RequestMalformedError('request.message is required.');
    this.checkRequired(context);
    this.activate(context);
    const message = this.decoded(params.message);
    const binding = this.bindingFor(message);
    if (!binding) return undefined;
    const requested = new Set(context.requestedExtensions ?? []);
    return {
      binding,
      call: {
        message,
        rawMessage: params.message,
        context,
        extensionActivated: requested.has(binding.extension.uri),
        wireVersion: context.requestedVersion,
        configuration: params.configuration,
      },
    };
  }
}
