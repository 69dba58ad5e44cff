import { getJson } from '../api.js';
import { badge, clock, cu, h, json, section, table } from '../dom.js';
import type { TaskDetail, TaskRow } from '../types.js';

const STATES = ['', 'running', 'completed', 'failed', 'canceled'];

/** The ACMP task list with its filters (state, capability, caller), kept in the URL hash. */
export async function tasksPage(query: URLSearchParams, go: (hash: string) => void): Promise<HTMLElement> {
  const { tasks, total } = await getJson<{ tasks: TaskRow[]; total: number }>(`/tasks?${query.toString()}`);
  const filter = (name: string, control: HTMLInputElement | HTMLSelectElement) => {
    control.value = query.get(name) ?? '';
    control.addEventListener('change', () => {
      const next = new URLSearchParams(query);
      if (control.value === '') next.delete(name);
      else next.set(name, control.value);
      go(`#/tasks?${next.toString()}`);
    });
    return h('label', {}, name, control);
  };
  const select = h(
    'select',
    { 'data-testid': 'filter-state' },
    ...STATES.map((s) => h('option', { value: s }, s || 'any')),
  );
  return h(
    'div',
    { 'data-testid': 'page-tasks' },
    h(
      'div',
      { class: 'filters' },
      filter('state', select),
      filter('capability', h('input', { placeholder: 'e.g. summarize', 'data-testid': 'filter-capability' })),
      filter('caller', h('input', { placeholder: 'e.g. agent:buyer', 'data-testid': 'filter-caller' })),
      h('span', { class: 'total' }, 'matching: ', h('b', { 'data-testid': 'tasks-total' }, total)),
    ),
    table(
      tasks,
      [
        { title: 'Task', cell: (t) => h('code', {}, t.taskId) },
        { title: 'State', cell: (t) => badge(t.state) },
        { title: 'Capability', cell: (t) => t.capability ?? '—' },
        { title: 'Caller', cell: (t) => t.caller },
        { title: 'Created', cell: (t) => clock(t.createdAt) },
        { title: 'Finished', cell: (t) => clock(t.finishedAt) },
        {
          title: 'Cost',
          cell: (t) => (t.errorCode !== undefined ? badge(String(t.errorCode), 'failed') : cu(t.costCu)),
        },
        { title: 'Host', cell: (t) => h('code', { class: 'dim' }, t.hostId) },
      ],
      {
        testid: 'tasks',
        empty: 'No task matches.',
        onRow: (t) => go(`#/tasks/${encodeURIComponent(t.taskId)}`),
      },
    ),
  );
}

/** One task: its record, history, request, chunks, outcome and proof. */
export async function taskPage(id: string, reveal: boolean): Promise<HTMLElement> {
  const d = await getJson<TaskDetail>(`/tasks/${encodeURIComponent(id)}${reveal ? '?reveal=1' : ''}`);
  const t = d.task;
  return h(
    'div',
    { 'data-testid': 'page-task' },
    h('h2', {}, h('a', { href: '#/tasks' }, 'Tasks'), ' / ', h('code', {}, t.taskId), ' ', badge(t.state)),
    h(
      'div',
      { class: 'columns' },
      section(
        'Record',
        h(
          'dl',
          {},
          ...[
            ['Capability', t.capability ?? '—'],
            ['Caller', t.caller],
            ['Host', t.hostId],
            ['Cost', cu(t.costCu)],
            ['Chunks', String(t.chunkCount)],
            ['Deadline', clock(t.deadlineAt)],
          ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
        ),
      ),
      section(
        'History',
        h(
          'ol',
          { class: 'timeline', 'data-testid': 'task-history' },
          ...d.history.map((e) => h('li', {}, h('time', {}, clock(e.at)), ' ', e.what)),
        ),
      ),
    ),
    section(`Request${d.masked ? ' (payloads masked)' : ''}`, json(d.request, 'task-request')),
    d.chunks.length > 0 ? section(`Chunks (${d.chunks.length})`, json(d.chunks)) : null,
    section('Outcome', json(d.outcome, 'task-outcome')),
    section('Proof', json(d.proof)),
  );
}
