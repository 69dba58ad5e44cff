import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type {
  LoadResult,
  LoadSpec,
  LoadToParent,
  ServerSpec,
  ServerToParent,
  WarmUpReport,
} from './protocol.js';

/** Child processes of a benchmark run: servers, the load generator, in-process runs. All run TS via tsx. */

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

function forkTs(file: string, args: string[] = [], nodeArgs: string[] = []): ChildProcess {
  return fork(here(file), args, {
    execArgv: ['--import', 'tsx', ...nodeArgs],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next IPC message of a given type (rejects on an `error` message or an early exit). */
function nextMessage<T extends { type: string }>(child: ChildProcess, type: T['type']): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string; message?: string }): void => {
      if (message.type === type) {
        cleanup();
        resolve(message as T);
      } else if (message.type === 'error') {
        cleanup();
        reject(new Error(message.message));
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`child exited (${code}) while waiting for ${type}`));
    };
    const cleanup = (): void => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

/** A server in its own process. */
export interface ServerProc {
  readonly url: string;
  readonly grpcUrl: string | undefined;
  readonly caCert: string | undefined;
  stats(gc?: boolean): Promise<{ cpuUs: number; rss: number }>;
  close(): Promise<void>;
}

/** Extra node flags for every server (e.g. `--cpu-prof`), set by `run.ts --profile`. */
export const serverNodeArgs: string[] = [];

export async function startServer(
  spec: ServerSpec,
  options: { exposeGc?: boolean } = {},
): Promise<ServerProc> {
  const child = forkTs(
    './server.ts',
    [JSON.stringify(spec)],
    [...serverNodeArgs, ...(options.exposeGc ? ['--expose-gc'] : [])],
  );
  const ready = await nextMessage<Extract<ServerToParent, { type: 'ready' }>>(child, 'ready');
  return {
    url: ready.url,
    grpcUrl: ready.grpcUrl,
    caCert: ready.caCert,
    async stats(gc = false) {
      const reply = nextMessage<Extract<ServerToParent, { type: 'stats' }>>(child, 'stats');
      child.send({ type: 'stats', gc });
      const { cpu, rss } = await reply;
      return { cpuUs: cpu.user + cpu.system, rss };
    },
    async close() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** One measured run: the load result plus the server's CPU time and RSS over the measured phase. */
export interface Measured {
  load: LoadResult;
  serverCpuUs: number;
  rss: number;
  /** How the steady-state warm-up ended (steady-state runs only). */
  warmUp?: WarmUpReport;
}

/** The server side of a load run: what the load generator talks to and whose CPU it counts. */
export type LoadTarget = Pick<ServerProc, 'url' | 'grpcUrl' | 'caCert' | 'stats'>;

/** The load generator in its own process (one for the whole run; it opens a fresh pool per run). */
export class LoadGen {
  private readonly child = forkTs('./load.ts');

  async measure(server: LoadTarget, spec: Omit<LoadSpec, 'url' | 'grpcUrl' | 'caCert'>): Promise<Measured> {
    return (await this.warm(server, spec))();
  }

  /**
   * Warms up (by count, or until steady) and resolves to the measured phase, so that several load
   * generators can start their measured phases together (bench/pg-scale.ts).
   */
  async warm(
    server: LoadTarget,
    spec: Omit<LoadSpec, 'url' | 'grpcUrl' | 'caCert'>,
  ): Promise<() => Promise<Measured>> {
    const warmed = nextMessage<Extract<LoadToParent, { type: 'warmed' }>>(this.child, 'warmed');
    this.child.send({
      type: 'run',
      spec: { ...spec, url: server.url, grpcUrl: server.grpcUrl, caCert: server.caCert },
    });
    const { warmUp } = await warmed;
    return async () => {
      const before = await server.stats();
      const done = nextMessage<Extract<LoadToParent, { type: 'result' }>>(this.child, 'result');
      this.child.send({ type: 'go' });
      const { result } = await done;
      const after = await server.stats();
      if (result.errors > 0)
        throw new Error(`${spec.scenario.kind}: ${result.errors} errors, first: ${result.firstError}`);
      return { load: result, serverCpuUs: after.cpuUs - before.cpuUs, rss: after.rss, warmUp };
    };
  }

  close(): void {
    this.child.kill();
  }
}

/** Runs a one-shot child (e.g. the in-process ACPspec run) and returns its result message. */
export async function runChild<T>(file: string, spec: unknown): Promise<T> {
  const child = forkTs(file, [JSON.stringify(spec)], serverNodeArgs);
  try {
    const { result } = await nextMessage<{ type: 'result'; result: T }>(child, 'result');
    return result;
  } finally {
    child.kill();
  }
}
