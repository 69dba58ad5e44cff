import { createServer, IncomingMessage, ServerResponse, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { appServerClasses, leanFront, type AppServerClasses } from './lean-front.js';

/** Node's own request and response classes. */
const NODE_CLASSES: AppServerClasses = { IncomingMessage, ServerResponse };

/**
 * The lean front runs, for `POST /rpc` and `POST /api/send`, exactly what the app's router would run — the same layers in the
 * same order with the same `url` and `baseUrl`, error handlers on an error — without the router. Each
 * case is sent to a server whose listener is the app and to one whose listener is the front, and the
 * trace of what ran and the answer are compared.
 */

type Trace = string[];

function appWith(trace: Trace, extra?: (app: express.Express) => void): express.Express {
  const app = express();
  app.disable('x-powered-by');
  const note =
    (name: string): express.RequestHandler =>
    (req, _res, next) => {
      trace.push(`${name} ${req.method} ${req.url} base=${req.baseUrl} orig=${req.originalUrl}`);
      next();
    };
  app.use(note('host-guard'));
  app.get('/rpc', note('get-route'));
  app.use('/other', note('other-mount'));
  // Under a mount, as the HTTP+JSON sends are: a neighbouring mount that only shares a prefix.
  app.use('/api/se', note('api-se-mount'));
  app.use('/api', note('api-mount'), (req, res, next) => {
    if (req.header('x-mode') === 'answer')
      return void res.status(202).json({ api: req.url, base: req.baseUrl });
    next();
  });
  extra?.(app);
  app.use(
    '/rpc',
    note('mounted-1'),
    (req, res, next) => {
      const mode = req.header('x-mode');
      if (mode === 'next-error') return next(new Error('from next'));
      if (mode === 'throw') throw new Error('thrown');
      if (mode === 'reject') return Promise.reject(new Error('rejected'));
      if (mode === 'answer') return void res.status(201).json({ answered: req.url, base: req.baseUrl });
      next();
    },
    note('mounted-3'),
  );
  app.use((req, res) => {
    trace.push(`not-found ${req.url}`);
    res.status(404).json({ error: 'not found' });
  });
  app.use((err: Error, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    trace.push(`error ${err.message} ${req.url} base=${req.baseUrl}`);
    res.status(500).json({ error: err.message });
  });
  return app;
}

/** Counts the requests the app's router dispatches (its `handle`, which `app.handle` calls). */
function countRouting(app: express.Express): { count: number } {
  const counter = { count: 0 };
  const router: object = app.router;
  const handle: unknown = Reflect.get(router, 'handle');
  if (typeof handle !== 'function') throw new Error('the router has no handle()');
  Reflect.set(router, 'handle', (...args: unknown[]): unknown => {
    counter.count++;
    const result: unknown = Reflect.apply(handle, router, args);
    return result;
  });
  return counter;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(listener: RequestListener, classes: AppServerClasses = NODE_CLASSES): Promise<string> {
  const server = createServer(classes, listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface Case {
  readonly method: string;
  readonly path: string;
  readonly mode?: string;
}

async function exchange(base: string, trace: Trace, c: Case): Promise<string> {
  trace.length = 0;
  const response = await fetch(`${base}${c.path}`, {
    method: c.method,
    headers: { 'content-type': 'application/json', ...(c.mode ? { 'x-mode': c.mode } : {}) },
    ...(c.method === 'POST' ? { body: '{}' } : {}),
  });
  const body = await response.text();
  return [
    `${response.status} ${response.headers.get('content-type')} ${response.headers.get('content-length')}`,
    body,
    ...trace,
  ].join('\n');
}

const CASES: Case[] = [
  { method: 'POST', path: '/rpc' },
  { method: 'POST', path: '/rpc?a=1&b=2' },
  { method: 'POST', path: '/rpc', mode: 'answer' },
  { method: 'POST', path: '/rpc?q=1', mode: 'answer' },
  { method: 'POST', path: '/rpc', mode: 'next-error' },
  { method: 'POST', path: '/rpc', mode: 'throw' },
  { method: 'POST', path: '/rpc', mode: 'reject' },
  { method: 'POST', path: '/rpc/', mode: 'answer' },
  { method: 'POST', path: '/RPC', mode: 'answer' },
  { method: 'POST', path: '/rpcx' },
  { method: 'GET', path: '/rpc' },
  { method: 'POST', path: '/other' },
  { method: 'POST', path: '/api/send' },
  { method: 'POST', path: '/api/send?a=1' },
  { method: 'POST', path: '/api/send', mode: 'answer' },
  { method: 'POST', path: '/api/send?q=1', mode: 'answer' },
  { method: 'POST', path: '/api/send', mode: 'throw' },
  { method: 'POST', path: '/api/send/', mode: 'answer' },
  { method: 'POST', path: '/api/sendx', mode: 'answer' },
  { method: 'POST', path: '/api/se', mode: 'answer' },
  { method: 'GET', path: '/api/send', mode: 'answer' },
];

/** The front's paths: one that is a mount's own path, one under a mount. */
const PATHS = ['/rpc', '/api/send'];

describe('leanFront', () => {
  it('runs what the router runs for every case, answered alike', async () => {
    const viaApp: Trace = [];
    const viaFront: Trace = [];
    const appBase = await serve(appWith(viaApp));
    const frontApp = appWith(viaFront);
    const frontBase = await serve(leanFront(frontApp, PATHS));
    for (const c of CASES) {
      const expected = await exchange(appBase, viaApp, c);
      expect(await exchange(frontBase, viaFront, c), `${c.method} ${c.path} ${c.mode ?? ''}`).toBe(expected);
    }
  });

  it("on a server built with the app's classes, answers alike without switching the prototypes", async () => {
    const viaApp: Trace = [];
    const viaFront: Trace = [];
    const appBase = await serve(appWith(viaApp));
    const switched: boolean[] = [];
    const frontApp = appWith(viaFront, (a) =>
      a.use('/rpc', (req, res, next) => {
        switched.push(Object.getPrototypeOf(req) === a.request || Object.getPrototypeOf(res) === a.response);
        next();
      }),
    );
    const frontBase = await serve(leanFront(frontApp, PATHS), appServerClasses(frontApp));
    for (const c of CASES) {
      const expected = await exchange(appBase, viaApp, c);
      expect(await exchange(frontBase, viaFront, c), `${c.method} ${c.path} ${c.mode ?? ''}`).toBe(expected);
    }
    // Every POST /rpc the front served kept the server's own classes; the app's requests were adopted.
    const front = CASES.filter((c) => c.method === 'POST' && /^\/rpc(\?|$)/.test(c.path)).length;
    expect(switched.filter((s) => !s)).toHaveLength(front);
  });

  it('takes POST to each of its paths past the router, and everything else through it', async () => {
    const trace: Trace = [];
    const app = appWith(trace);
    const routed = countRouting(app);
    const base = await serve(leanFront(app, PATHS));
    await exchange(base, trace, { method: 'POST', path: '/rpc', mode: 'answer' });
    await exchange(base, trace, { method: 'POST', path: '/rpc?x=1' });
    await exchange(base, trace, { method: 'POST', path: '/api/send', mode: 'answer' });
    await exchange(base, trace, { method: 'POST', path: '/api/send?x=1' });
    expect(routed.count).toBe(0);
    await exchange(base, trace, { method: 'GET', path: '/rpc' });
    await exchange(base, trace, { method: 'POST', path: '/rpc/' });
    await exchange(base, trace, { method: 'POST', path: '/api/sendx' });
    await exchange(base, trace, { method: 'GET', path: '/api/send' });
    expect(routed.count).toBe(4);
  });

  it('leaves the path to the router when a matching route has path parameters', async () => {
    const trace: Trace = [];
    const app = appWith(trace, (a) =>
      a.post('/:name', (req, res) => void res.json({ name: req.params.name })),
    );
    const routed = countRouting(app);
    const base = await serve(leanFront(app, ['/rpc']));
    expect(await exchange(base, trace, { method: 'POST', path: '/rpc' })).toContain('{"name":"rpc"}');
    expect(routed.count).toBe(1);
  });
});
