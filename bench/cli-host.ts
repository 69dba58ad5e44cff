import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadTarget } from './procs.js';

/**
 * A host started the way a user starts one: `a2a-commerce serve` (the CLI, as `npm start` runs it) in a
 * child process, default configuration (SQLite in the data dir, self-signed TLS, demo modules) except
 * what the caller adds. Its CPU and RSS are read from /proc, so the host carries no bench code.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const USER_HZ = 100;

/** Options of a CLI host. */
export interface CliHostOptions {
  /** Extra `serve` flags (e.g. `--db postgres://…`, `--migrate`). */
  args?: readonly string[];
  /** Pin the host to these CPUs (`taskset -c`), when taskset exists. */
  cpus?: string;
}

/** A running CLI host. */
export interface CliHost extends LoadTarget {
  readonly pid: number;
  readonly dataDir: string;
  close(): Promise<void>;
}

/**
 * The per-caller limits are off: a load generator is one caller sending thousands of requests, and the
 * defaults (600 requests a minute, 32 running tasks) would refuse most of them (docs/host.md).
 */
export const UNLIMITED = ['--rate-limit', '0', '--max-running-tasks', '0'] as const;

/** CPU µs (user + system, all threads) and RSS bytes of a process, from /proc. */
export function procStats(pid: number): { cpuUs: number; rss: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
  return { cpuUs: ((Number(fields[11]) + Number(fields[12])) * 1e6) / USER_HZ, rss: pages * 4096 };
}

/** `taskset -c cpus` before a command when taskset exists and cpus are given. */
export function pinned(cpus: string | undefined, command: string[]): string[] {
  return cpus && existsSync('/usr/bin/taskset') ? ['/usr/bin/taskset', '-c', cpus, ...command] : command;
}

function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const onExit = (code: number | null): void =>
      reject(new Error(`serve exited (${code}): ${err.slice(-500)}`));
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) {
        child.off('exit', onExit);
        resolve(match[1]);
      }
    });
    child.once('exit', onExit);
  });
}

/** Spawns a command that prints "listening on <url>" and wraps it as a host. */
async function launch(command: string[], dir: { dataDir: string; certFile?: string }): Promise<CliHost> {
  const child = spawn(command[0]!, command.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const remove = (): void => rmSync(dir.dataDir, { recursive: true, force: true });
  let url: string;
  try {
    url = await waitForUrl(child);
  } catch (error) {
    remove();
    throw error;
  }
  const pid = child.pid!;
  return {
    pid,
    dataDir: dir.dataDir,
    url,
    grpcUrl: undefined,
    caCert: url.startsWith('https:') && dir.certFile ? readFileSync(dir.certFile, 'utf8') : undefined,
    stats: () => Promise.resolve(procStats(pid)),
    async close() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      remove();
    },
  };
}

const tsx = (file: string): string[] => [process.execPath, '--import', 'tsx', join(root, file)];

/** Starts `serve` on 127.0.0.1, a free port and a fresh data dir; resolves once it listens. */
export function startCliHost(options: CliHostOptions = {}): Promise<CliHost> {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2ac-bench-cli-'));
  const command = pinned(options.cpus, [
    ...tsx('src/cli/bin.ts'),
    'serve',
    ...['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'],
    ...UNLIMITED,
    ...(options.args ?? []),
  ]);
  return launch(command, { dataDir, certFile: join(dataDir, 'tls', 'localhost.crt') });
}

/**
 * The floor: a bare node:http(s) JSON-RPC echo (bench/floor-server.ts) answering every POST with an
 * `acmp_result` naming the request's task id. With `tlsFrom`, it serves TLS with that host's certificate.
 */
export function startFloor(options: { tlsFrom?: CliHost; cpus?: string }): Promise<CliHost> {
  const dataDir = mkdtempSync(join(tmpdir(), 'a2ac-bench-floor-'));
  const tls = options.tlsFrom?.caCert ? join(options.tlsFrom.dataDir, 'tls') : undefined;
  const command = pinned(options.cpus, [...tsx('bench/floor-server.ts'), ...(tls ? [tls] : [])]);
  return launch(command, { dataDir, certFile: tls ? join(tls, 'localhost.crt') : undefined });
}
