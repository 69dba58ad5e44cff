/** Where a CLI verb writes; injected so tests capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
}

/** A usage error: printed with the verb's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The process's own streams and environment. */
export function processIo(): CliIo {
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : text + '\n'),
    env: process.env,
  };
}
