import { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import type { NextFunction, Request, Response } from 'express';

/**
 * The front of the lean invoke path (docs/acmp-a2a-binding.md "The lean invoke path"): the host's request
 * listener, ahead of Express's router. For a `POST` to exactly one of a few paths (the JSON-RPC endpoint,
 * the HTTP+JSON sends, the MCP endpoint; with or without a query) it runs the app's own layers that match that path —
 * planned once per path, from the app's router stack, in the router's order — exactly as the router would
 * call them (the same layer objects, `url` and `baseUrl` trimmed under a mount, error handlers on an
 * error), but without the router's walk, path matching and bookkeeping over every other route of the
 * host for each request. Every other request goes to the app. So the edge stays one edge, whichever way a
 * request comes in: a middleware added to the app in front of every route runs here too.
 */

/** What the front needs of a layer of Express 5's router (`router@2`, lib/layer.js). */
interface RouterLayer {
  match(path: string): false | { path: string; keys: readonly string[] };
  handleRequest(req: Request, res: Response, next: NextFunction): void;
  handleError(error: unknown, req: Request, res: Response, next: NextFunction): void;
  route?: { _handlesMethod(method: string): boolean };
}

/** A matching layer and the part of the path it is mounted at ('' for the app level). */
interface Step {
  readonly layer: RouterLayer;
  readonly mountedAt: string;
}

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The host's request listener: `POST` to one of `paths` runs on the front, every other request on the app.
 * A path's plan is made at its first request, when the app is complete (the host mounts everything before
 * it listens); a layer the front cannot replay without the router (a route with path parameters, a router
 * stack of another shape) sends the path back to the app for good.
 */
export function leanFront(app: express.Express, paths: readonly string[]): Listener {
  const plans = new Map<string, readonly Step[] | undefined>();
  return (incoming, outgoing) => {
    for (const path of paths) {
      const query = queryOf(incoming, path);
      if (query === undefined) continue;
      if (!plans.has(path)) plans.set(path, planOf(app, path));
      const plan = plans.get(path);
      if (plan === undefined) break;
      run(app, plan, { incoming, outgoing, path, query });
      return;
    }
    app(incoming, outgoing);
  };
}

/** The layers of the app's router that match `POST path`, or undefined when one cannot be replayed. */
function planOf(app: express.Express, path: string): readonly Step[] | undefined {
  const stack: readonly unknown[] = app.router.stack;
  const steps: Step[] = [];
  for (const layer of stack) {
    if (!isRouterLayer(layer)) return undefined;
    const match = layer.match(path);
    if (match === false) continue;
    if (match.keys.length > 0) return undefined;
    if (layer.route && !layer.route._handlesMethod('POST')) continue;
    steps.push({ layer, mountedAt: layer.route ? '' : match.path });
  }
  return steps;
}

function isRouterLayer(value: unknown): value is RouterLayer {
  return (
    typeof value === 'object' &&
    value !== null &&
    'match' in value &&
    typeof value.match === 'function' &&
    'handleRequest' in value &&
    typeof value.handleRequest === 'function' &&
    'handleError' in value &&
    typeof value.handleError === 'function'
  );
}

/**
 * Gives a Node request or response the app's prototype, as `app.handle` does: from then on it is the
 * Express object (always true; a predicate, so the type follows what the call did). An object the
 * server made from {@link appServerClasses} already inherits from it and keeps its own prototype.
 */
function adopt<T extends object>(value: object, prototype: T): value is T {
  if (!Object.prototype.isPrototypeOf.call(prototype, value)) Object.setPrototypeOf(value, prototype);
  return true;
}

/** The request and response classes of the host's HTTP server (Node's `ServerOptions`). */
export interface AppServerClasses {
  readonly IncomingMessage: typeof IncomingMessage;
  readonly ServerResponse: typeof ServerResponse;
}

/**
 * Request and response classes for the host's HTTP server whose instances inherit from the app's own
 * request and response (Express's `app.request` and `app.response`), so that the front need not switch
 * their prototypes. Switching an object's prototype after it was built, as `app.handle` does, gives the
 * request and response new hidden classes and slows every property access after it (4.7 KB more
 * allocation per request on a bare server, 14.7 KB per invoke on the host; docs/performance.md); an object built on the right prototype costs nothing more than a plain one.
 * Requests the app serves are still adopted by `app.handle` as before.
 */
export function appServerClasses(app: express.Express): AppServerClasses {
  class AppRequest extends IncomingMessage {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  class AppResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

/** One request through the plan, as `app.handle` and the router's `next` would take it. */
function run(
  app: express.Express,
  plan: readonly Step[],
  exchange: { incoming: IncomingMessage; outgoing: ServerResponse; path: string; query: string },
): void {
  // What `app.handle` does before its router runs (Express 5, lib/application.js); the host's app has
  // `x-powered-by` disabled.
  const { incoming: req, outgoing: res } = exchange;
  if (!adopt(req, app.request) || !adopt(res, app.response)) return;
  req.res = res;
  res.req = req;
  res.locals ??= {};
  const original = req.url;
  req.originalUrl = original;
  let index = 0;
  const next: NextFunction = (err?: unknown) => {
    // As the router: 'route' ends a route (there is none here with more than this layer), 'router'
    // leaves the app's router, and any other value is an error for the error handlers that follow.
    const error = err === 'route' ? undefined : err;
    req.url = original;
    req.baseUrl = '';
    if (error === 'router') return finish(res, undefined);
    const step = plan[index++];
    if (step === undefined) return finish(res, error);
    req.params = {};
    if (step.mountedAt !== '') {
      // The rest of the url after the mount, with a leading slash (the router's `trimPrefix`).
      const rest = exchange.path.slice(step.mountedAt.length) + exchange.query;
      req.url = rest.startsWith('/') ? rest : `/${rest}`;
      req.baseUrl = step.mountedAt;
    }
    if (error === undefined) step.layer.handleRequest(req, res, next);
    else step.layer.handleError(error, req, res, next);
  };
  next();
}

/**
 * Past the last layer (the host's own 404 and error handlers answer before this is reached): the
 * router's final handler in its simplest form.
 */
function finish(res: Response, error: unknown): void {
  if (res.headersSent) {
    if (!res.writableEnded) res.end();
    return;
  }
  res.statusCode = error === undefined ? 404 : 500;
  res.end();
}

/** The query string (with its `?`, or '') of a POST to exactly `path`; undefined for any other request. */
function queryOf(req: IncomingMessage, path: string): string | undefined {
  const url = req.url;
  if (req.method !== 'POST' || url === undefined || !url.startsWith(path)) return undefined;
  if (url.length === path.length) return '';
  return url.charCodeAt(path.length) === 0x3f /* ? */ ? url.slice(path.length) : undefined;
}
