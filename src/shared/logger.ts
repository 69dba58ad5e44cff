/** Structured log fields: ids, codes, counts, durations — never personal data or payloads. */
export type LogFields = Record<string, string | number | boolean | null | undefined>;

/** A structured logger. Implementations write one JSON object per line. */
export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/**
 * A JSON-lines logger writing to `write` (stderr in the server entry point). Only the fields given are
 * written; callers pass ids and codes, never message bodies, so no personal data reaches the log.
 */
export function createJsonLogger(options: {
  level?: LogLevel;
  write: (line: string) => void;
  now?: () => number;
}): Logger {
  const threshold = RANK[options.level ?? 'info'];
  const now = options.now ?? Date.now;
  const log =
    (level: Exclude<LogLevel, 'silent'>) =>
    (event: string, fields?: LogFields): void => {
      if (RANK[level] < threshold) return;
      // The record's own keys come last: a field cannot overwrite time, level or event.
      options.write(JSON.stringify({ ...fields, time: new Date(now()).toISOString(), level, event }) + '\n');
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A logger that drops everything (tests, library use without logging). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A safe description of an unknown error for logs: its class name and code, never its message text. */
export function errorFields(error: unknown): LogFields {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      error_name: error.name,
      error_code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    };
  }
  return { error_name: typeof error };
}
