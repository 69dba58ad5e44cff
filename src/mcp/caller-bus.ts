import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';

type Listener = (event: ServerEvent) => void;

/**
 * The event bus of the HTTP endpoint's `subscriptions/listen` streams (MCP 2026-07-28), scoped by caller.
 * The SDK's listen router subscribes one listener per stream while it serves the listen request; the
 * endpoint serves each request inside {@link runAs} its caller, so each listener is tied to the caller who
 * opened the stream. {@link publishTo} then reaches only that caller's streams: a caller never learns that
 * another caller's resource changed (A2A §3.3.2, as the bindings answer for another agent's transaction).
 * A listener subscribed outside any caller (which the endpoint never does) receives no scoped event.
 */
export class CallerScopedBus implements ServerEventBus {
  private readonly scope = new AsyncLocalStorage<string>();
  private readonly listeners = new Map<Listener, string | undefined>();

  /** Runs `serve` (one HTTP request) as `caller`. */
  runAs<T>(caller: string, serve: () => T): T {
    return this.scope.run(caller, serve);
  }

  subscribe(listener: Listener): () => void {
    const own: Listener = (event) => listener(event);
    this.listeners.set(own, this.scope.getStore());
    return () => void this.listeners.delete(own);
  }

  /** Every stream, whoever opened it (changes that are the same for every caller). */
  publish(event: ServerEvent): void {
    for (const listener of this.listeners.keys()) deliver(listener, event);
  }

  /** Only the streams `owner` opened. */
  publishTo(owner: string, event: ServerEvent): void {
    for (const [listener, caller] of this.listeners) if (caller === owner) deliver(listener, event);
  }
}

function deliver(listener: Listener, event: ServerEvent): void {
  try {
    listener(event);
  } catch {
    // One stream's failure (a closed socket) must not keep the event from the others.
  }
}
