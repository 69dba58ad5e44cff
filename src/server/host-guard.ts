import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { A2A_PATHS } from '../a2a/host/agent-card.js';
import { sendHostError, type WireShape } from '../a2a/host/wire-errors.js';
import { MCP_PATH } from '../mcp/acmp-extension.js';
import type { Logger } from '../shared/logger.js';
import { hostNameOf, type HostAccess } from './allowed-hosts.js';

/** How much of a refused name a log line keeps. */
const LOGGED_NAME_CHARS = 100;

/**
 * The host's one `Host`/`Origin` check, in front of every route (A2A JSON-RPC and HTTP+JSON, the card,
 * ACPspec over HTTP, MCP): a `Host` naming none of the allowed names is refused (DNS rebinding), and so is
 * a browser `Origin` that is not one of them (MCP Streamable HTTP §Security: servers MUST validate
 * `Origin`). A request without `Origin` (every non-browser client) passes that half. Refusals are HTTP 403
 * in the route's error shape with ErrorInfo `HOST_NOT_ALLOWED` / `ORIGIN_NOT_ALLOWED`, before
 * authentication and before any body is read.
 */
export function hostGuard(access: HostAccess, logger: Logger): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const host = req.headers.host;
    if (access.hosts !== undefined && !allowed(access.hosts, host)) {
      logger.info('http.host_refused', { host: host?.slice(0, LOGGED_NAME_CHARS) ?? null });
      sendHostError(res, shapeOf(req.path), { reason: 'HOST_NOT_ALLOWED', message: 'Host not allowed' });
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== '' && !allowed(access.origins, originHostOf(origin))) {
      logger.info('http.origin_refused', { origin: origin.slice(0, LOGGED_NAME_CHARS) });
      sendHostError(res, shapeOf(req.path), { reason: 'ORIGIN_NOT_ALLOWED', message: 'Origin not allowed' });
      return;
    }
    next();
  };
}

function allowed(names: ReadonlySet<string>, value: string | undefined): boolean {
  const name = hostNameOf(value);
  return name !== undefined && names.has(name);
}

/** The `host[:port]` of an http(s) origin; undefined for `null`, other schemes and anything unparsable. */
function originHostOf(origin: string): string | undefined {
  if (!URL.canParse(origin)) return undefined;
  const url = new URL(origin);
  return /^https?:$/.test(url.protocol) ? url.host : undefined;
}

/** JSON-RPC endpoints answer a JSON-RPC error; everything else google.rpc.Status, as for a 401. */
function shapeOf(path: string): WireShape {
  return path.startsWith(A2A_PATHS.jsonRpc) || path.startsWith(MCP_PATH) ? 'jsonrpc' : 'rest';
}
