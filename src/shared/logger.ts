import { activeTraceIds } from './tracing.js';
import { errorCode } from './errors.js';

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

/** Options of {@link createJsonLogger}. */
export interface JsonLoggerOptions {
  /** The lowest level written (default `info`). */
  level?: LogLevel;
  write: (line: string) => void;
  /** Epoch milliseconds for each record's `time` (default `Date.now`). */
  now?: () => number;
}

/**
 * A JSON-lines logger writing to `write` (stderr in the server entry point). Only the fields given are
 * written; callers pass ids and codes, never message bodies, so no personal data reaches the log. A
 * record written while a span is recording carries its `trace_id` and `span_id` (W3C hex ids), so logs
 * and traces join (docs/operations.md "Tracing").
 */
export function createJsonLogger(options: JsonLoggerOptions): Logger {
  return new JsonLogger(RANK[options.level ?? 'info'], options.write, options.now ?? Date.now);
}

/** One JSON object a line, for records at or above the threshold rank. */
class JsonLogger implements Logger {
  constructor(
    private readonly threshold: number,
    private readonly write: (line: string) => void,
    private readonly now: () => number,
  ) {}

  debug(event: string, fields?: LogFields): void {
    this.log('debug', event, fields);
  }

  info(event: string, fields?: LogFields): void {
    this.log('info', event, fields);
  }

  warn(event: string, fields?: LogFields): void {
    this.log('warn', event, fields);
  }

  error(event: string, fields?: LogFields): void {
    this.log('error', event, fields);
  }

  private log(level: Exclude<LogLevel, 'silent'>, event: string, fields: LogFields | undefined): void {
    if (RANK[level] < this.threshold) return;
    // The record's own keys come last: a field cannot overwrite time, level, event or the trace ids.
    const record = { ...fields, time: new Date(this.now()).toISOString(), level, event, ...activeTraceIds() };
    this.write(JSON.stringify(record) + '\n');
  }
}

/** A logger that drops everything (tests, library use without logging). */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A safe description of an unknown error for logs: its class name and code, never its message text. */
export function errorFields(error: unknown): LogFields {
  if (error instanceof Error) {
    const code = errorCode(error);
    return {
      error_name: error.name,
      error_code: typeof code === 'string' || typeof code === 'number' ? code : undefined,
    };
  }
  return { error_name: typeof error };
}
