import type { AcpEvent } from '../../acpspec/envelope.js';
import type { Check } from '../check.js';
import { declaredOf, needAccepts } from './card.js';
import { eventIdOf, openWire, sameJson, setupAck, setupEvents, type AcpBinding } from './expect.js';
import { rule, steps } from './outcome.js';
import { baseState, deltaOn, freshTransactionId, kitEvent, snapshotOf } from './samples.js';
import type { AcpWire } from './wire.js';

/** Re-reads the stream: `earlier` must be its unchanged prefix, and `added` (ids) must follow it. */
async function appendedTo(
  wire: AcpWire,
  transactionId: string,
  step: { name: string; earlier: unknown[]; added: string[] },
): Promise<unknown[]> {
  const now = await setupEvents(wire, transactionId);
  const changed = step.earlier.findIndex((event, i) => !sameJson(event, now[i]));
  rule(
    changed < 0,
    `after ${step.name}: earlier event #${changed} (${String(eventIdOf(step.earlier[changed]))}) was changed or removed`,
  );
  const later = new Set(now.slice(step.earlier.length).map(eventIdOf));
  const lost = step.added.filter((id) => !later.has(id));
  rule(lost.length === 0, `after ${step.name}: the event(s) ${lost.join(', ')} were not appended`);
  return now;
}

/**
 * Events append-only (seed 001 "The Conformance Rule": append to the event stream rather than replacing
 * it; docs/acpspec-core.md "Deltas" and "Snapshots of a known transaction"): each step re-reads the stream (over A2A
 * from the state answer, over HTTPS from the events route) and finds the earlier events unchanged, in
 * place, with the new ones after them — for an appended event, for a snapshot that omits the held
 * events, and (whatever the reply) for a delta that replaces an event and a snapshot that re-sends one
 * with other content.
 */
export function eventsCheck(binding: AcpBinding): Check {
  return {
    id: `${binding}-events-append-only`,
    binding,
    title: 'the event stream is only appended to: earlier events stay unchanged, new ones follow',
    spec: 'seed 001 "The Conformance Rule That Decides Everything" (append to the event stream)',
    writes: true,
    run: (ctx) =>
      steps(async () => {
        const declared = declaredOf(ctx);
        needAccepts(declared, 'snapshot');
        const deltas = declared.accepts.includes('delta');
        const wire = await openWire(ctx, binding);
        const tx = freshTransactionId('events');
        const [e1, e2, e3, e4] = ['ev-1', 'ev-2', 'ev-3', 'ev-4'].map((id) => kitEvent(id)) as [
          AcpEvent,
          AcpEvent,
          AcpEvent,
          AcpEvent,
        ];
        const first = snapshotOf(tx, baseState({ events: [e1, e2] }));
        setupAck(await wire.send(first), 'a snapshot with two events');
        let stream = await appendedTo(wire, tx, {
          name: 'the first snapshot',
          earlier: [],
          added: ['ev-1', 'ev-2'],
        });
        const append = deltas
          ? deltaOn(first, [{ op: 'add', path: '/events/-', value: e3 }])
          : snapshotOf(tx, baseState({ events: [e1, e2, e3] }));
        setupAck(await wire.send(append), 'an envelope appending an event');
        stream = await appendedTo(wire, tx, { name: 'an appended event', earlier: stream, added: ['ev-3'] });
        const omitting = snapshotOf(tx, baseState({ events: [e4] }));
        setupAck(await wire.send(omitting), 'a snapshot with one new event');
        stream = await appendedTo(wire, tx, {
          name: 'a snapshot that omits the held events',
          earlier: stream,
          added: ['ev-4'],
        });
        const rewritten = { ...e1, type: 'conform.rewritten', data: { rewritten: true } };
        if (deltas) {
          await wire.send(deltaOn(omitting, [{ op: 'replace', path: '/events/0', value: rewritten }]));
          stream = await appendedTo(wire, tx, {
            name: 'a delta replacing an event',
            earlier: stream,
            added: [],
          });
        }
        await wire.send(snapshotOf(tx, baseState({ events: [rewritten] })));
        await appendedTo(wire, tx, {
          name: 'a snapshot re-sending an event changed',
          earlier: stream,
          added: [],
        });
      }),
  };
}
