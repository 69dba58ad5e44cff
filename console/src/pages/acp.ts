import { getJson } from '../api.js';
import { badge, h, json, section, table, tile } from '../dom.js';
import type { TransactionDetail, TransactionRow } from '../types.js';

/** ACPspec: the transactions. */
export async function acpPage(go: (hash: string) => void): Promise<HTMLElement> {
  const v = await getJson<{ transactions: TransactionRow[]; total: number; absent?: boolean }>(
    '/acp/transactions',
  );
  if (v.absent)
    return h('p', { class: 'empty', 'data-testid': 'page-acp' }, 'No ACPspec receiver on this cluster.');
  return h(
    'div',
    { 'data-testid': 'page-acp' },
    h('div', { class: 'tiles' }, tile('Transactions', v.total, 'count-transactions')),
    section(
      'Transactions',
      table(
        v.transactions,
        [
          { title: 'Transaction', cell: (t) => h('code', {}, t.transactionId) },
          { title: 'Owner', cell: (t) => t.owner },
          { title: 'Version', cell: (t) => t.version },
          { title: 'Events', cell: (t) => t.eventCount },
          { title: 'Updated', cell: (t) => t.updatedAt },
        ],
        {
          testid: 'transactions',
          empty: 'No transaction.',
          onRow: (t) => go(`#/acp/${encodeURIComponent(t.transactionId)}`),
        },
      ),
    ),
  );
}

/** One transaction: lifecycle timeline, events, consent per party (conflicts highlighted), snapshot. */
export async function transactionPage(id: string, reveal: boolean): Promise<HTMLElement> {
  const d = await getJson<TransactionDetail>(
    `/acp/transactions/${encodeURIComponent(id)}${reveal ? '?reveal=1' : ''}`,
  );
  const scopes = [...new Set(d.consent.flatMap((c) => Object.keys(c.scopes)))];
  return h(
    'div',
    { 'data-testid': 'page-transaction' },
    h(
      'h2',
      {},
      h('a', { href: '#/acp' }, 'ACPspec'),
      ' / ',
      h('code', {}, d.transaction.transactionId),
      ' ',
      badge(`v${d.transaction.version}`, 'running'),
    ),
    h(
      'div',
      { class: 'columns' },
      section(
        'Lifecycle',
        h(
          'ol',
          { class: 'timeline', 'data-testid': 'lifecycle' },
          ...d.timeline.map((e) =>
            h(
              'li',
              {},
              h('time', {}, e.receivedAt),
              ' ',
              badge(e.kind, 'running'),
              ' ',
              h('code', { class: 'dim' }, e.envelopeId),
            ),
          ),
        ),
      ),
      section(
        'Consent per party',
        table(
          d.consent,
          [
            { title: 'Party', cell: (c) => h('code', {}, c.party) },
            ...scopes.map((s) => ({
              title: s,
              cell: (c: TransactionDetail['consent'][number]) => {
                const conflict = c.conflicts.some((x) => x.scope === s);
                const state = c.scopes[s] ?? '—';
                return conflict
                  ? h('span', { class: 'conflict', title: 'consent.conflict recorded' }, `⚠ ${state}`)
                  : badge(state, state === 'granted' ? 'completed' : state === '—' ? 'none' : 'canceled');
              },
            })),
          ],
          { testid: 'consent', empty: 'No party.' },
        ),
      ),
    ),
    section(
      `Events (${d.events.length})`,
      table(
        d.events,
        [
          { title: 'When', cell: (e) => e.occurred_at },
          {
            title: 'Type',
            cell: (e) => (e.type === 'consent.conflict' ? h('span', { class: 'conflict' }, e.type) : e.type),
          },
          { title: 'Subject', cell: (e) => h('code', {}, e.subject ?? '') },
          { title: 'Actor', cell: (e) => e.actor ?? '' },
        ],
        { testid: 'events', empty: 'No event.' },
      ),
    ),
    section(`Current snapshot${d.masked ? ' (personal data masked)' : ''}`, json(d.snapshot, 'snapshot')),
  );
}
