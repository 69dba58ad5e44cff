/** What {@link h} accepts as a child. */
export type Child = Node | string | number | null | undefined | false;

/**
 * Builds an element: `h('div', { class: 'card', 'data-testid': 'x' }, 'text', child)`. Attributes are set
 * with setAttribute and text as text nodes, never as HTML: values from the API cannot inject markup.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | undefined | ((e: Event) => void)> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A time as a local clock time with seconds. */
export function clock(ms: number | undefined): string {
  return ms === undefined ? '—' : new Date(ms).toLocaleTimeString([], { hour12: false });
}

/** A duration to or since now, short: `12 s`, `4 min`, `3 h`. */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** An amount of CU, up to nine decimals (nano-CU), without trailing zeros. */
export function cu(value: number | undefined): string {
  if (value === undefined) return '—';
  return `${Number(value.toFixed(9)).toString()} CU`;
}

/** A metric tile: a label and a big number. */
export function tile(label: string, value: string | number, testid: string, tone = ''): HTMLElement {
  return h(
    'div',
    { class: `tile ${tone}` },
    h('div', { class: 'tile-label' }, label),
    h('div', { class: 'tile-value', 'data-testid': testid }, value),
  );
}

/** A table of rows; `columns` name each column and how a row fills it. */
export function table<T>(
  rows: readonly T[],
  columns: readonly { title: string; cell: (row: T) => Child }[],
  options: { testid: string; empty: string; onRow?: (row: T) => void },
): HTMLElement {
  if (rows.length === 0)
    return h('p', { class: 'empty', 'data-testid': `${options.testid}-empty` }, options.empty);
  const body = h('tbody');
  for (const row of rows) {
    const tr = h('tr', options.onRow ? { class: 'link', onclick: () => options.onRow?.(row) } : {});
    for (const c of columns) tr.append(h('td', {}, c.cell(row)));
    body.append(tr);
  }
  return h(
    'table',
    { 'data-testid': options.testid, 'data-rows': rows.length },
    h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c.title)))),
    body,
  );
}

/** A small coloured label. */
export function badge(text: string, tone: string = text): HTMLElement {
  return h('span', { class: `badge badge-${tone}` }, text);
}

/** A section with a heading. */
export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'panel' }, h('h2', {}, title), ...children);
}

/** JSON, pretty-printed, in a scrolling block. */
export function json(value: unknown, testid?: string): HTMLElement {
  return h('pre', { class: 'json', 'data-testid': testid }, JSON.stringify(value, null, 2));
}
