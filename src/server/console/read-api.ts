import express from 'express';
import type { ConsoleSources } from './console-routes.js';
import { readAcpPage, readAcpTransaction, readTaskPage, readTaskDetail } from './pages.js';
import { readEscrow } from './money-reads.js';
import { readNegotiation } from './negotiation-reads.js';
import { readOverview } from './overview-reads.js';
import { errorFields } from '../../shared/logger.js';
import { ConsoleInputError, limitOf, revealOf } from './params.js';

/** A comment line on the event stream this often keeps proxies from closing an idle stream. */
const SSE_PING_MS = 15_000;

type Handler = (req: express.Request, res: express.Response) => Promise<unknown>;

/** Answers a read: its JSON, 404 for nothing found, 400 for a bad parameter, a logged 500 otherwise. */
function read(sources: ConsoleSources, handler: Handler): express.RequestHandler {
  return (req, res) => {
    handler(req, res).then(
      (body) => {
        if (body === undefined)
          res.status(404).json({ error: { code: 404, status: 'NOT_FOUND', message: 'Not found' } });
        else res.json(body);
      },
      (error: unknown) => {
        if (error instanceof ConsoleInputError) {
          res.status(400).json({ error: { code: 400, status: 'INVALID_ARGUMENT', message: error.message } });
          return;
        }
        sources.logger.error('console.read_failed', errorFields(error));
        res.status(500).json({ error: { code: 500, status: 'INTERNAL', message: 'Internal error' } });
      },
    );
  };
}

/** The read API (docs/console.md "Read API"): GET only, JSON, the same for the console and scripts. */
export function consoleReadApi(sources: ConsoleSources): express.Router {
  const api = express.Router();
  const now = (): number => sources.clock.now();
  const has = (table: string): Promise<boolean> => sources.tables.has(table, now());
  api.get(
    '/overview',
    read(sources, () => readOverview(sources.database, sources.tables, now())),
  );
  api.get(
    '/tasks',
    read(sources, (req) => readTaskPage(sources, req)),
  );
  api.get(
    '/tasks/:id',
    read(sources, (req, res) =>
      readTaskDetail(sources, { id: String(req.params.id), reveal: revealOf(req, res, sources.logger) }),
    ),
  );
  api.get(
    '/escrow',
    read(sources, async (req) =>
      (await has('escrows'))
        ? readEscrow(sources.database, limitOf(req))
        : { absent: true, accounts: [], escrows: [] },
    ),
  );
  api.get(
    '/negotiation',
    read(sources, async (req) =>
      (await has('acmp_agreements'))
        ? readNegotiation(sources.database, { limit: limitOf(req), sessions: await has('acmp_sessions') })
        : { absent: true, sessions: [], agreements: [] },
    ),
  );
  api.get(
    '/acp/transactions',
    read(sources, (req) => readAcpPage(sources, limitOf(req))),
  );
  api.get(
    '/acp/transactions/:id',
    read(sources, (req, res) =>
      readAcpTransaction(sources, { id: String(req.params.id), reveal: revealOf(req, res, sources.logger) }),
    ),
  );
  api.get('/events', (req, res) => streamChanges(sources, req, res));
  return api;
}

/** `GET /console/api/events`: Server-Sent Events, one `change` event per change the feed sees. */
function streamChanges(sources: ConsoleSources, req: express.Request, res: express.Response): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(`event: ready\ndata: ${JSON.stringify({ at: sources.clock.now() })}\n\n`);
  const unsubscribe = sources.feed.subscribe((change) => {
    res.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
  });
  const ping = setInterval(() => res.write(': ping\n\n'), SSE_PING_MS);
  ping.unref();
  req.on('close', () => {
    clearInterval(ping);
    unsubscribe();
  });
}
