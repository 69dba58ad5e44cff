import { getJson } from '../api.js';
import { minuteChart } from '../chart.js';
import { badge, clock, cu, h, section, span, table, tile } from '../dom.js';
import type { Overview } from '../types.js';

/** The overview: activity of the last hour, counts, errors by code, the hosts of the cluster. */
export async function overviewPage(): Promise<HTMLElement> {
  const o = await getJson<Overview>('/overview');
  const a = o.activity;
  const tiles = h(
    'div',
    { class: 'tiles' },
    tile('Invokes / s (last min)', o.lastHour.perSecond.toFixed(2), 'rate'),
    tile('Invokes (1 h)', o.lastHour.invokes, 'invokes'),
    tile('CU billed (1 h)', cu(o.lastHour.cuBilled), 'cu-billed'),
    tile('Errors (1 h)', o.lastHour.errors, 'errors', o.lastHour.errors > 0 ? 'warn' : ''),
    tile('Running', a?.running ?? 0, 'running'),
    ...Object.entries(o.counts).map(([name, n]) =>
      tile(name[0]?.toUpperCase() + name.slice(1), n, `count-${name}`),
    ),
  );
  const charts = a
    ? h(
        'div',
        { class: 'charts' },
        minuteChart(
          'Invokes and errors per minute',
          a.minutes,
          [
            { label: 'invokes', color: '#4f9dff', values: a.invokes },
            { label: 'errors', color: '#ff6b6b', values: a.errors },
          ],
          'chart-invokes',
        ),
        minuteChart(
          'CU billed per minute',
          a.minutes,
          [{ label: 'CU', color: '#3ecf8e', values: a.cu }],
          'chart-cu',
        ),
      )
    : h('p', { class: 'empty' }, 'No ACMP tasks table in this database.');
  const codes = Object.entries(a?.errorsByCode ?? {}).map(([code, n]) => ({ code, n }));
  return h(
    'div',
    { 'data-testid': 'page-overview' },
    tiles,
    charts,
    h(
      'div',
      { class: 'columns' },
      section(
        'Errors by code (1 h)',
        table(
          codes,
          [
            { title: 'Code', cell: (r) => badge(r.code, 'failed') },
            { title: 'Count', cell: (r) => r.n },
          ],
          {
            testid: 'errors-by-code',
            empty: 'No errors in the last hour.',
          },
        ),
      ),
      section(
        `Hosts (${o.store})`,
        table(
          o.hosts,
          [
            { title: 'Host', cell: (r) => h('code', {}, r.hostId) },
            {
              title: 'Liveness',
              cell: (r) => badge(r.alive ? 'alive' : 'silent', r.alive ? 'completed' : 'failed'),
            },
            { title: 'Last beat', cell: (r) => `${span(o.now - r.aliveAt)} ago` },
            { title: 'Started', cell: (r) => clock(r.startedAt) },
          ],
          { testid: 'hosts', empty: 'No host has beaten yet.' },
        ),
      ),
    ),
  );
}
