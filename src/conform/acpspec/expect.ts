import { canonicalJson } from '../../shared/jcs.js';
import type { ConformBinding, ConformContext } from '../check.js';
import { A2aWire } from './a2a-wire.js';
import { HttpsWire } from './https-wire.js';
import { need, rule } from './outcome.js';
import { describe, type AcpReply, type AcpWire } from './wire.js';
import { isJsonObject } from '../../shared/json.js';

/** The two ACPspec bindings a wire check runs on. */
export type AcpBinding = Extract<ConformBinding, 'acpspec-a2a' | 'acpspec-https'>;

/** A wire on `binding` (skips the check when the agent does not serve it). */
export function openWire(ctx: ConformContext, binding: AcpBinding): Promise<AcpWire> {
  return binding === 'acpspec-a2a' ? A2aWire.open(ctx) : HttpsWire.open(ctx);
}

/** A setup step: skips the check unless the agent acknowledged the envelope. */
export function setupAck(reply: AcpReply, step: string): void {
  need(reply.kind === 'ack', `setup: ${step} was not acknowledged (${describe(reply)})`);
}

/** The rule: the agent acknowledged the envelope. */
export function expectAck(reply: AcpReply, step: string): void {
  rule(reply.kind === 'ack', `${step}: expected an acp_ack, got ${describe(reply)}`);
}

/** The rule: the agent refused with exactly `code`. */
export function expectCode(reply: AcpReply, code: string, step: string): void {
  rule(
    reply.kind === 'error' && reply.code === code,
    `${step}: expected acp_error ${code}, got ${describe(reply)}`,
  );
}

/**
 * A setup step: the transaction's state, which must be a snapshot (no `parent_envelope_id`, an events
 * list); anything else skips the check — answering a snapshot is `…-state-snapshot`'s rule.
 */
export async function setupState(wire: AcpWire, transactionId: string): Promise<Record<string, unknown>> {
  const reply = await wire.state(transactionId);
  need(reply.kind === 'data', `setup: the state request answered ${describe(reply)}`);
  need(
    !('parent_envelope_id' in reply.data) && Array.isArray(reply.data['events']),
    'setup: the state request did not answer a snapshot (see the state-snapshot check)',
  );
  return reply.data;
}

/** A setup step: the transaction's event stream as the binding shows it. */
export async function setupEvents(wire: AcpWire, transactionId: string): Promise<unknown[]> {
  const events = await wire.events(transactionId);
  need(Array.isArray(events), `setup: the event stream could not be read (${describe(events)})`);
  return events;
}

/** True when two JSON values have the same canonical (RFC 8785) form. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The `event_id` of an event as read back, if it has one. */
export function eventIdOf(event: unknown): unknown {
  return isJsonObject(event) ? event.event_id : undefined;
}
