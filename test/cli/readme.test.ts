import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshClone } from '../helpers/fresh-clone.js';
import { cleanup, onCleanup } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

/*
 * Every command in the README's sh blocks, run as written in a fresh clone, in document order. Two
 * deliberate deviations, because tests never use fixed ports: a `serve` listens on a free port
 * (`--port <n>` becomes `--port 0`, and A2AC_PORT=0 covers the default), and the URLs of the commands
 * after it are pointed at that port. PostgreSQL's URL is a fresh database on TEST_PG_URL.
 */

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** Commands not run here, each with the reason. */
const NOT_RUN: Record<string, string> = {
  'npm ci && npm run demo': 'npm ci reinstalls node_modules; `npm run demo` is test/cli/demo.test.ts',
  'npm ci && npm test': 'the test suite itself',
};

/** The sh blocks of the README, each as a list of commands (continuations joined, comments dropped). */
function shBlocks(): string[][] {
  return [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    m[1]!
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .map((line) => line.replace(/\s+#\s.*$/, '').trim())
      .filter((line) => line !== ''),
  );
}

interface Shell {
  cwd: string;
  env: Record<string, string>;
  /** The base URL of the host the last serve command started. */
  url?: string;
  stop?: () => Promise<void>;
}

function isServe(command: string): boolean {
  return command === 'npm start' || / serve( |$)/.test(command);
}

/** The command as run: serve on a free port, clients pointed at the running host. */
function adapt(command: string, shell: Shell): string {
  if (isServe(command)) return command.replace(/--port \d+/, '--port 0');
  return shell.url ? command.replace(/https?:\/\/127\.0\.0\.1:\d+/g, shell.url) : command;
}

function run(command: string, shell: Shell): Promise<{ code: number | null; out: string }> {
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: shell.cwd,
    env: shell.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

/** Starts a serve command in its own process group and waits until it prints its URL. */
async function serve(command: string, shell: Shell): Promise<void> {
  await shell.stop?.();
  const child = spawn('/bin/sh', ['-c', command], {
    cwd: shell.cwd,
    env: { ...shell.env, A2AC_PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async (): Promise<void> => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    await exited;
  };
  onCleanup(stop);
  shell.stop = stop;
  let out = '';
  shell.url = await new Promise<string>((resolve, reject) => {
    const seen = (c: Buffer): void => {
      out += c.toString('utf8');
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    void exited.then(() => reject(new Error(`"${command}" exited before listening:\n${out}`)));
  });
}

async function runBlock(commands: string[], shell: Shell): Promise<void> {
  for (const written of commands) {
    if (written in NOT_RUN) continue;
    const exported = /^export (\w+)=(\S+)$/.exec(written);
    if (exported) {
      shell.env[exported[1]!] = exported[1] === 'A2AC_DB' ? await freshPgDatabase() : exported[2]!;
      continue;
    }
    const command = adapt(written, shell);
    if (isServe(command)) {
      await serve(command, shell);
      continue;
    }
    const result = await run(command, shell);
    expect({ command: written, code: result.code, out: result.code === 0 ? '' : result.out }).toEqual({
      command: written,
      code: 0,
      out: '',
    });
  }
}

let shell: Shell;
beforeAll(() => {
  shell = { cwd: freshClone(), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } };
});
afterAll(cleanup);

describe('README commands, as written, in a fresh clone', () => {
  const blocks = shBlocks();

  it('has the five sh blocks this test knows, the first being the two commands not run here', () => {
    expect(blocks.length).toBe(5);
    expect(blocks[0]).toEqual(Object.keys(NOT_RUN));
  });

  it('"The first ten minutes": serve, then every client command against it', async () => {
    await runBlock(blocks[1]!, shell);
    await runBlock(blocks[2]!, shell);
  }, 180_000);

  it('"Running the host": npm start, plain HTTP with a token, reassign', async () => {
    await runBlock(blocks[3]!, shell);
  }, 120_000);

  it.skipIf(!process.env.TEST_PG_URL)(
    '"Running the host": own certificate and PostgreSQL',
    async () => {
      await runBlock(blocks[4]!, shell);
    },
    120_000,
  );
});
