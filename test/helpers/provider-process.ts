import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { onCleanup } from './host.js';

const PROVIDER = fileURLToPath(new URL('../acmp/fixtures/provider-process.ts', import.meta.url));

/**
 * Starts an ACMP provider host in its own process (test/acmp/fixtures/provider-process.ts), for tests
 * that kill it; resolves with its URL once it listens. Killed by {@link cleanup} if still running.
 */
export async function providerProcess(options: {
  heartbeatMs: number;
  db?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<{ url: string; child: ChildProcess }> {
  const args = [
    '--import',
    'tsx',
    PROVIDER,
    String(options.heartbeatMs),
    ...(options.db ? [options.db] : []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`provider exited early (${String(code)})`)));
    lines.on('line', (line) => {
      const match = /^listening (\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  return { url, child };
}
