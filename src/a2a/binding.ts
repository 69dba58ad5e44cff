import type {
  AgentExtension,
  AgentSkill,
  Message,
  SendMessageConfiguration,
  StreamResponse,
  Task,
} from '@a2a-js/sdk';
import type { AgentExecutor, PushNotificationSender, ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { InboundMessage } from './part-codec.js';
import type { TaskViewSource } from './task-views.js';

/** What a binding is given for one call. */
export interface BindingCall {
  readonly message: InboundMessage;
  /** The SDK message as received (for storing in task history). */
  readonly rawMessage: Message;
  readonly context: ServerCallContext;
  /** Whether the client activated this binding's extension (A2A-Extensions). */
  readonly extensionActivated: boolean;
  /** The wire version the client speaks ('1.0' or '0.3'). */
  readonly wireVersion: string;
  /** The request's SendMessageConfiguration (returnImmediately, historyLength, …), when given. */
  readonly configuration?: SendMessageConfiguration | undefined;
}

/** What a binding gets from the host when it is mounted. */
export interface BindingHost {
  /** The SDK task store the host serves GetTask from. */
  readonly taskStore: TaskStore;
  /**
   * The host's push-notification sender (allow-listed webhooks, docs/host.md), when push is on: a binding
   * that keeps its own tasks delivers their updates through it to the configs their callers registered.
   */
  readonly pushSender?: PushNotificationSender;
}

/**
 * A protocol binding carried over A2A (ACMP, ACPspec). A binding contributes its card extension, its
 * skills and the routing of its messages; the host does the rest. Adding a binding is: implement this,
 * pass it to `createApp` (through a host module that also brings its tables and any HTTP routes).
 */
export interface A2ABinding {
  readonly id: string;
  /** The card's `capabilities.extensions[]` entry. */
  readonly extension: AgentExtension;
  /** Further card extension entries the binding contributes (e.g. a profile under a URI we control). */
  readonly extraExtensions?: readonly AgentExtension[];
  readonly skills: readonly AgentSkill[];
  /** Called once when the host starts. */
  attach?(host: BindingHost): void;
  /** Tasks the binding keeps in its own records, shown to A2A as views (never copied into the SDK store). */
  readonly views?: TaskViewSource | readonly TaskViewSource[];
  /**
   * Set by a binding whose messages are a subset of another's (the escrow agent's Layer 4 requests are ACMP
   * parts too): the host offers messages to such bindings first, whatever the module order.
   */
  readonly narrowClaim?: boolean;
  /** True when this binding owns the message (decided from its parts, not from headers). */
  claims(message: InboundMessage): boolean;
  sendMessage(call: BindingCall): Promise<Message | Task>;
  sendMessageStream(call: BindingCall): AsyncGenerator<StreamResponse, void, undefined>;
  /**
   * A2A SubscribeToTask for a running task this binding owns; `undefined` when the task is not its own
   * (the SDK's handler then answers).
   */
  resubscribe?(
    taskId: string,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined>;
  /** A2A CancelTask for a task this binding owns; `undefined` when the task is not its own. */
  cancelTask?(taskId: string, context: ServerCallContext): Promise<Task | undefined>;
  close?(): Promise<void>;
}

/**
 * An executor for the plain A2A messages no binding claims (a host module's, e.g. the TCK's), with the
 * skills it adds to the card. The SDK's DefaultRequestHandler keeps its tasks.
 */
export interface PlainExecutor {
  readonly executor: AgentExecutor;
  readonly skills: readonly AgentSkill[];
}

/** SDK types the host's upper layers name (they import them from here, never from the SDK). */
export type { AgentCard, AgentSkill, Task } from '@a2a-js/sdk';
export type { AgentExecutor } from '@a2a-js/sdk/server';
