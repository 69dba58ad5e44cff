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
 * Merges an inbound event list into the held stream. The stream only grows (seed "Append to the event
 * stream rather than replacing it"): held events are kept even when the inbound list omits them, new
 * ones are appended by `event_id`, an identical repeat is a no-op.
 * @throws AcpError `ACP_POLICY_VIOLATION` when an `event_id` reappears with different content.
 */
export function mergeEvents(held: readonly AcpEvent[], inbound: readonly AcpEvent[]): EventMerge {
  const known = new Map<string, AcpEvent>();
  for (const event of held) known.set(event.event_id, event);
  const appended: AcpEvent[] = [];
  const conflicts: { event_id: string; pointer: string }[] = [];
  inbound.forEach((event, index) => {
    const prior = known.get(event.event_id);
    if (prior === undefined) {
      known.set(event.event_id, event);
      appended.push(event);
    } else if (prior !== event && !sameEvent(prior, event)) {
      conflicts.push({ event_id: event.event_id, pointer: `/events/${index}` });
    }
  });
  if (conflicts.length > 0) throw new AcpError('ACP_POLICY_VIOLATION', 'event stream cannot be rewritten', { conflicts });
  return { events: appended.length === 0 ? [...held] : [...held, ...appended], appended };
}

function sameEvent(a: AcpEvent, b: AcpEvent): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
