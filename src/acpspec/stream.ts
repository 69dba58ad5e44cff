import { canonicalJson } from '../shared/jcs.js';
import type { AcpEvent } from './envelope.js';
import { AcpError } from './errors.js';

/** Result of {@link mergeEvents}. */
export interface EventMerge {
  /** The full stream: held events first, then new ones in inbound order. */
  events: AcpEvent[];
  /** Only the events that were not held. */
  appended: AcpEvent[];
}

/**
 * Positions of event ids, shared by a stream and every stream grown from it, so that a delta appending one
 * event costs O(1) instead of indexing the whole stream again (docs/acpspec-core.md "Ingest path": cost flat as a transaction grows).
 * A position only counts for a stream whose entry there has that id: streams grown from the same one on
 * different branches (an ingest that lost a race) share the index without seeing each other's events.
 */
type EventIndex = Map<string, number[]>;
const indexes = new WeakMap<readonly AcpEvent[], EventIndex>();

function indexOf(events: readonly AcpEvent[]): EventIndex {
  const known = indexes.get(events);
  if (known !== undefined) return known;
  const index: EventIndex = new Map();
  events.forEach((event, i) => index.set(event.event_id, [i]));
  indexes.set(events, index);
  return index;
}

function heldEvent(events: readonly AcpEvent[], index: EventIndex, id: string): AcpEvent | undefined {
  for (const i of index.get(id) ?? []) {
    const event = events[i];
    if (event?.event_id === id) return event;
  }
  return undefined;
}

/**
 * The stream `held` grown by `appended` (events whose ids it does not hold), sharing its id index. States
 * are immutable: this never changes `held`. `grown`, when given, is already `held` followed by `appended`
 * (a patch's result) and is used instead of a new copy.
 */
export function appendEvents(
  held: AcpEvent[],
  appended: readonly AcpEvent[],
  grown?: AcpEvent[],
): AcpEvent[] {
  if (appended.length === 0) return held;
  const events = grown ?? [...held, ...appended];
  const index = indexOf(held);
  appended.forEach((event, i) => {
    const positions = index.get(event.event_id);
    if (positions === undefined) index.set(event.event_id, [held.length + i]);
    else positions.push(held.length + i);
  });
  indexes.set(events, index);
  return events;
}

/**
 * Merges an inbound event list into the held stream. The stream only grows (seed "Append to the event
 * stream rather than replacing it"): held events are kept even when the inbound list omits them, new
 * ones are appended by `event_id`, an identical repeat is a no-op. `grown`, when given, is `held` followed
 * by `inbound` (a delta's patched stream): reused when every inbound event is new, so appending costs no copy.
 * @throws AcpError `ACP_POLICY_VIOLATION` when an `event_id` reappears with different content.
 */
export function mergeEvents(held: AcpEvent[], inbound: readonly AcpEvent[], grown?: AcpEvent[]): EventMerge {
  const index = indexOf(held);
  const fresh = new Map<string, AcpEvent>();
  const appended: AcpEvent[] = [];
  const conflicts: { event_id: string; pointer: string }[] = [];
  inbound.forEach((event, i) => {
    const prior = fresh.get(event.event_id) ?? heldEvent(held, index, event.event_id);
    if (prior === undefined) {
      fresh.set(event.event_id, event);
      appended.push(event);
    } else if (prior !== event && !sameEvent(prior, event)) {
      conflicts.push({ event_id: event.event_id, pointer: `/events/${i}` });
    }
  });
  if (conflicts.length > 0)
    throw new AcpError('ACP_POLICY_VIOLATION', 'event stream cannot be rewritten', {
      details: { conflicts },
    });
  // `grown` (held + inbound) is the merged stream itself when every inbound event was new.
  const reuse =
    grown !== undefined &&
    appended.length === inbound.length &&
    grown.length === held.length + inbound.length;
  return { events: appendEvents(held, appended, reuse ? grown : undefined), appended };
}

function sameEvent(a: AcpEvent, b: AcpEvent): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
