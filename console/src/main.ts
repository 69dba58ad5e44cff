import './style.css';
import { follow, RefusedError, setToken, token, type Change } from './api.js';
import { h } from './dom.js';
import { acpPage, transactionPage } from './pages/acp.js';
import { escrowPage, remaining } from './pages/escrow.js';
import { negotiationPage } from './pages/negotiation.js';
import { overviewPage } from './pages/overview.js';
import { taskPage, tasksPage } from './pages/tasks.js';

/** The pages, by the first segment of the hash, and the change areas that refresh each. */
const NAV = [
  { path: 'overview', title: 'Overview', areas: ['tasks', 'escrow', 'negotiation', 'acp'] },
  { path: 'tasks', title: 'ACMP tasks', areas: ['tasks'] },
  { path: 'escrow', title: 'Escrow', areas: ['escrow'] },
  { path: 'negotiation', title: 'Negotiation', areas: ['negotiation'] },
  { path: 'acp', title: 'ACPspec', areas: ['acp'] },
] as const;

/** Re-read the overview this often even without changes: liveness and the per-second rate move with time. */
const OVERVIEW_REFRESH_MS = 5000;

const app = document.getElementById('app') as HTMLElement;
const state = { reveal: false, live: false, updates: 0, stop: undefined as (() => void) | undefined };
const main = h('main', { 'data-testid': 'main' });
const liveDot = h('span', { class: 'live', 'data-testid': 'live' }, 'connecting');
const updated = h('span', { class: 'dim', 'data-testid': 'updated' }, '');

function go(hash: string): void {
  if (location.hash === hash) void render();
  else location.hash = hash;
}

function route(): { page: string; id: string | undefined; query: URLSearchParams } {
  const [path = '', search = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const [page = 'overview', id] = path.split('/');
  return {
    page: page || 'overview',
    id: id === undefined ? undefined : decodeURIComponent(id),
    query: new URLSearchParams(search),
  };
}

let rendering: Promise<void> | undefined;
let again = false;

/** Renders the current page; a render asked for while one runs runs once after it. */
async function render(): Promise<void> {
  if (rendering) {
    again = true;
    return;
  }
  rendering = draw().finally(() => {
    rendering = undefined;
    if (again) {
      again = false;
      void render();
    }
  });
  await rendering;
}

async function draw(): Promise<void> {
  const { page, id, query } = route();
  for (const a of document.querySelectorAll('nav a'))
    a.classList.toggle('active', a.getAttribute('data-page') === page);
  try {
    const content =
      page === 'tasks' && id !== undefined
        ? await taskPage(id, state.reveal)
        : page === 'tasks'
          ? await tasksPage(query, go)
          : page === 'escrow'
            ? await escrowPage()
            : page === 'negotiation'
              ? await negotiationPage()
              : page === 'acp' && id !== undefined
                ? await transactionPage(id, state.reveal)
                : page === 'acp'
                  ? await acpPage(go)
                  : await overviewPage();
    main.replaceChildren(content);
    updated.textContent = `updated ${new Date().toLocaleTimeString([], { hour12: false })}`;
    updated.setAttribute('data-updates', String(++state.updates));
  } catch (error) {
    if (error instanceof RefusedError) return login(error.message);
    main.replaceChildren(
      h(
        'p',
        { class: 'error', 'data-testid': 'error' },
        error instanceof Error ? error.message : String(error),
      ),
    );
  }
}

function onChange(change: Change): void {
  const { page } = route();
  const nav = NAV.find((n) => n.path === page) ?? NAV[0];
  if (change.areas.some((a) => (nav.areas as readonly string[]).includes(a))) void render();
}

function setLive(live: boolean): void {
  state.live = live;
  liveDot.textContent = live ? 'live' : 'offline';
  liveDot.classList.toggle('on', live);
}

/** The sign-in form: the operator credential is kept in this tab's sessionStorage only. */
function login(message?: string): void {
  state.stop?.();
  state.stop = undefined;
  setToken(undefined);
  const input = h('input', {
    type: 'password',
    placeholder: 'operator token',
    'data-testid': 'token',
    autocomplete: 'off',
  });
  const form = h(
    'form',
    { class: 'login', 'data-testid': 'login' },
    h('h1', {}, 'a2a-commerce console'),
    h(
      'p',
      { class: 'dim' },
      'Read-only. Sign in with the operator credential (--operator-token), not a caller token.',
    ),
    message ? h('p', { class: 'error', 'data-testid': 'refused' }, message) : null,
    input,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    start();
  });
  app.replaceChildren(form);
  input.focus();
}

function shell(): HTMLElement {
  const reveal = h('input', { type: 'checkbox', 'data-testid': 'reveal' });
  reveal.addEventListener('change', () => {
    state.reveal = reveal.checked;
    void render();
  });
  return h(
    'div',
    { class: 'shell' },
    h(
      'header',
      {},
      h('div', { class: 'brand' }, 'a2a-commerce', h('span', { class: 'dim' }, ' console')),
      h('nav', {}, ...NAV.map((n) => h('a', { href: `#/${n.path}`, 'data-page': n.path }, n.title))),
      h(
        'div',
        { class: 'status' },
        h(
          'label',
          { class: 'reveal', title: 'Unmask personal data (each reveal is logged)' },
          reveal,
          ' reveal personal data',
        ),
        updated,
        liveDot,
        h('button', { class: 'link', onclick: () => login() }, 'sign out'),
      ),
    ),
    main,
  );
}

function start(): void {
  app.replaceChildren(shell());
  state.stop = follow({ onChange, onStatus: setLive });
  void render();
}

window.addEventListener('hashchange', () => void render());
setInterval(() => {
  for (const el of document.querySelectorAll<HTMLElement>('[data-until]'))
    el.textContent = remaining(Number(el.dataset.until));
}, 1000);
setInterval(() => {
  if (token() !== undefined && route().page === 'overview') void render();
}, OVERVIEW_REFRESH_MS);

if (token() === undefined) login();
else start();
