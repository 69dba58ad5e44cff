import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openWallet } from '../../src/connect/wallet.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, onCleanup, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

const SCRIPT = fileURLToPath(new URL('./fixtures/wallet-buyer.ts', import.meta.url));

/** The operator's limits file (mode 600) in a fresh directory; the store is SQLite beside it unless given. */
function limitsFile(limits: Record<string, unknown>, store?: string): string {
  const path = join(tempDir(), 'limits.json');
  writeFileSync(path, JSON.stringify({ wallet_id: 'fleet', limits, ...(store ? { store } : {}) }));
  chmodSync(path, 0o600);
  return path;
}

/** A buyer process: its stdout lines as they come, and its exit signal. */
function buyerProcess(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, A2AC_TOKEN: secret('buyer'), ...env },
  });
  onCleanup(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  let out = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
    for (const w of [...waiters]) {
      const match = w.pattern.exec(out);
      if (match) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(match);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const line = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const match = pattern.exec(out);
      if (match) return resolve(match);
      waiters.push({ pattern, resolve });
      void exited.then(() => reject(new Error(`buyer exited before ${String(pattern)}: ${out}`)));
    });
  return { child, line, exited };
}

/**
 * A proxy in front of the escrow agent that forwards everything, rewrites the agent's own URL in replies
 * (so the card points at the proxy), and — once armed — forwards the first escrowLock and keeps its answer:
 * the agent has executed the lock, the buyer never hears of it.
 */
async function holdingProxy(target: string) {
  let held: (() => void) | undefined;
  let armed = false;
  const lockExecuted = new Promise<void>((resolve) => (held = resolve));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const body: Buffer[] = [];
    req.on('data', (c: Buffer) => body.push(c));
    req.on('end', () => {
      const sent = Buffer.concat(body);
      const hold = armed && sent.includes('acmp/escrowLock');
      if (hold) armed = false;
      const upstream = request(
        new URL(req.url ?? '/', target),
        { method: req.method, headers: req.headers },
        (up) => {
          const reply: Buffer[] = [];
          up.on('data', (c: Buffer) => reply.push(c));
          up.on('end', () => {
            if (hold) return held?.();
            const text = Buffer.concat(reply).toString('utf8').replaceAll(target, url);
            const headers = { ...up.headers, 'content-length': String(Buffer.byteLength(text)) };
            res.writeHead(up.statusCode ?? 502, headers).end(text);
          });
        },
      );
      upstream.end(sent);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onCleanup(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url, arm: () => void (armed = true), lockExecuted };
}

/** The wallet stores the process tests run on: SQLite beside the file, and PostgreSQL with TEST_PG_URL. */
function backends(): [string, () => Promise<string | undefined>][] {
  return [
    ['SQLite', () => Promise.resolve(undefined)],
    ...(process.env.TEST_PG_URL ? [['PostgreSQL', freshPgDatabase] as [string, () => Promise<string>]] : []),
  ];
}

describe('write-ahead and replay (Layer 7 §6.5): a buyer killed between send and answer', () => {
  it.each(backends())(
    'after kill -9 and a restart exactly one lock exists, logged once and counted once (%s)',
    async (_, store) => {
      const escrow = await escrowHost();
      await escrow.credit('agent:buyer', '1');
      const proxy = await holdingProxy(escrow.host.url);
      const file = limitsFile({ total_cap_cu: 1 }, await store());

      proxy.arm();
      const first = buyerProcess(['lock', file, proxy.url, '0.4']);
      await first.line(/locking\n/);
      await proxy.lockExecuted;
      first.child.kill('SIGKILL');
      expect((await first.exited).signal).toBe('SIGKILL');
      // The agent holds the lock; the wallet only knows it sent one.
      expect(await escrow.ledger.balance('', 'agent:buyer')).toBe(600_000_000n);

      const second = buyerProcess(['lock', file, proxy.url, '0'], { A2AC_TEST_NO_LOCK: '1' });
      const recovered = JSON.parse((await second.line(/recovered (.*)\n/))[1]!) as {
        method: string;
        outcome: string;
      }[];
      expect(recovered).toMatchObject([{ method: 'acmp/escrowLock', outcome: 'done' }]);
      expect((await second.exited).code).toBe(0);

      expect(await escrow.ledger.balance('', 'agent:buyer')).toBe(600_000_000n);
      const { wallet, close } = await openWallet({ limitsFile: file });
      onCleanup(close);
      const locks = await wallet.log({ kind: 'lock' });
      expect(locks).toHaveLength(1);
      expect(locks[0]).toMatchObject({ amount: 400_000_000n, outcome: 'ok:recovered' });
      expect(locks[0]!.escrowId).toMatch(/^esc_/);
      expect(await wallet.pending()).toEqual([]);
      // Counted once: 0.6 more fits the 1 CU cap exactly, a nano-CU beyond does not.
      await expect(
        wallet.authorize({ amount_cu: 0.600000001, counterparty: 'agent:p', kind: 'lock' }),
      ).rejects.toMatchObject({ code: 'SPEND_DENIED' });
      await expect(
        wallet.authorize({ amount_cu: 0.6, counterparty: 'agent:p', kind: 'lock' }),
      ).resolves.toBeDefined();
    },
  );
});

describe('one wallet, several buyer processes (Layer 7 §2.4)', () => {
  it.each(backends())(
    'holds the cap across two processes spending 10 × 0.1 CU each at once (%s)',
    async (_, store) => {
      const file = limitsFile({ total_cap_cu: 1 }, await store());
      const { close } = await openWallet({ limitsFile: file });
      await close();
      const buyers = [buyerProcess(['spend', file, '10', '0.1']), buyerProcess(['spend', file, '10', '0.1'])];
      const counts = await Promise.all(
        buyers.map(async (b) => (await b.line(/spent (\d+) (\d+)\n/)).slice(1).map(Number)),
      );
      expect(counts.reduce((sum, [ok]) => sum + ok!, 0)).toBe(10);
      expect(counts.reduce((sum, [, denied]) => sum + denied!, 0)).toBe(10);
      const { wallet, close: closeAgain } = await openWallet({ limitsFile: file });
      onCleanup(closeAgain);
      expect(await wallet.log({ kind: 'denied' })).toHaveLength(10);
    },
  );
});
