import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { cliCommand } from './dist.js';
import { onCleanup } from './host.js';

/** The repository root: the CLI runs from here, as `npx tsx src/cli/bin.ts` does. */
export const REPO_ROOT = new URL('../../', import.meta.url).pathname;

/** What a finished CLI process printed. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment a CLI child gets: the parent's PATH and HOME only, so neither A2AC_* settings nor
 * TEST_PG_URL leak in, plus `env`.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
}

/** Runs `a2a-commerce <args>` as a child process (through tsx, or built: ./dist.js) and waits for it to exit. */
export function runCliProcess(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliRun> {
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(() => void child.kill('SIGKILL'));
  return collect(child);
}

function collect(child: ChildProcess): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A `serve` child that printed its URL; `stop()` sends SIGTERM and waits for it to exit. */
export interface ServeProcess {
  url: string;
  stop(signal?: NodeJS.Signals): Promise<CliRun>;
}

/**
 * Starts `a2a-commerce serve <args>` as a child process and resolves once it prints "listening on <url>";
 * rejects with everything it printed if it exits first. Killed by the test cleanup.
 */
export function startServeProcess(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [...cliCommand(), 'serve', ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(() => void child.kill('SIGKILL'));
  const done = collect(child);
  return new Promise((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /listening on (\S+)/.exec(seen);
      if (match) {
        resolve({
          url: match[1]!,
          stop: (signal = 'SIGTERM') => {
            child.kill(signal);
            return done;
          },
        });
      }
    });
    void done.then((run) =>
      reject(new Error(`serve exited ${String(run.code)} before listening:\n${run.stdout}${run.stderr}`)),
    );
  });
}

/** A running CLI child: wait for its output, or for it to exit. */
export interface CliProcess {
  /** Resolves with the stdout so far once it matches; rejects if the process exits first. */
  waitForStdout(pattern: RegExp): Promise<string>;
  readonly done: Promise<CliRun>;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts `a2a-commerce <args>` as a child process (through tsx, or built: ./dist.js) without waiting for it. */
export function startCliProcess(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): CliProcess {
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env ?? {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onCleanup(() => void child.kill('SIGKILL'));
  const done = collect(child);
  let stdout = '';
  const waiters = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    for (const check of waiters) check();
  });
  return {
    done,
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    waitForStdout: (pattern) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(stdout)) return;
          waiters.delete(check);
          resolve(stdout);
        };
        waiters.add(check);
        check();
        void done.then((run) =>
          reject(
            new Error(
              `exited ${String(run.code)} before printing ${String(pattern)}:\n${run.stdout}${run.stderr}`,
            ),
          ),
        );
      }),
  };
}

/** A port nothing listens on (bound once, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
