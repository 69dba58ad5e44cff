import { getJson } from '../api.js';
import { badge, clock, cu, h, section, table, tile } from '../dom.js';
import type { NegotiationView } from '../types.js';
import { countdown } from './escrow.js';

/** Negotiation (Layer 6): open sessions and accepted agreements. */
export async function negotiationPage(): Promise<HTMLElement> {
  const v = await getJson<NegotiationView>('/negotiation');
  if (v.absent)
    return h('p', { class: 'empty', 'data-testid': 'page-negotiation' }, 'No negotiation on this cluster.');
  const open = v.sessions.filter((s) => s.open);
  return h(
    'div',
    { 'data-testid': 'page-negotiation' },
    h(
      'div',
      { class: 'tiles' },
      tile('Open sessions', open.length, 'count-open-sessions'),
      tile('Sessions', v.sessions.length, 'count-sessions'),
      tile('Agreements', v.agreements.length, 'count-agreements'),
      tile('Unconsumed', v.agreements.filter((a) => a.consumedBy === null).length, 'count-unconsumed'),
    ),
    section(
      'Sessions',
      table(
        v.sessions,
        [
          { title: 'Session', cell: (s) => h('code', {}, s.sessionId) },
          { title: 'Phase', cell: (s) => badge(s.phase, s.open ? 'running' : 'completed') },
          { title: 'Capability', cell: (s) => s.capability ?? '—' },
          { title: 'Standing offer', cell: (s) => cu(s.priceCu) },
          { title: 'Round', cell: (s) => s.rounds },
          { title: 'Caller', cell: (s) => s.caller },
          { title: 'Due', cell: (s) => (s.dueAt === undefined ? '—' : countdown(s.dueAt)) },
        ],
        { testid: 'sessions', empty: 'No session.' },
      ),
    ),
    section(
      'Agreements',
      table(
        v.agreements,
        [
          { title: 'Capability', cell: (a) => a.capability ?? '—' },
          { title: 'Price', cell: (a) => cu(a.priceCu) },
          { title: 'Caller', cell: (a) => a.caller },
          { title: 'Accepted', cell: (a) => clock(a.acceptedAt) },
          { title: 'Invoke by', cell: (a) => (a.consumedBy ? '—' : countdown(a.invokeBy)) },
          {
            title: 'Consumed by',
            cell: (a) => (a.consumedBy ? h('code', {}, a.consumedBy) : badge('open', 'running')),
          },
          { title: 'Escrow', cell: (a) => a.escrowId ?? 'direct' },
        ],
        { testid: 'agreements', empty: 'No agreement.' },
      ),
    ),
  );
}
