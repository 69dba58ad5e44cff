import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';

/**
 * Where the built console lives: `dist/console` of this package, found relative to this module — from
 * the built `dist/server/console/` and from the sources in `src/server/console/` alike. `undefined`
 * when the assets were not built (`npm run build`).
 */
export function consoleAssetsDir(): string | undefined {
  for (const relative of ['../../console/', '../../../dist/console/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

/**
 * The console's pages: same origin, no CDN (the Content-Security-Policy allows this host only), never
 * cached across builds except the hashed assets.
 */
export function consoleStatic(dir: string | undefined): express.RequestHandler {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set(
      'content-security-policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
    );
    res.set('x-content-type-options', 'nosniff');
    res.set('referrer-policy', 'no-referrer');
    next();
  });
  if (dir === undefined) {
    router.get('/', (_req, res) => {
      res.status(503).type('text/plain').send('The console was not built: run `npm run build`.\n');
    });
    return router;
  }
  router.use('/assets', express.static(`${dir}assets`, { immutable: true, maxAge: '365d', index: false }));
  router.get('/', (_req, res) => {
    res.set('cache-control', 'no-cache');
    res.sendFile(`${dir}index.html`);
  });
  return router;
}
