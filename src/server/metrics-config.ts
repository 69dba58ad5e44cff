import { LocalError } from '../shared/errors.js';

/** Where and how the host serves its metrics (docs/operations.md "Metrics"). */
export interface MetricsConfig {
  /** Bearer token a scrape must send; absent: `/metrics` is open. */
  readonly token: string | undefined;
  /**
   * A port of its own for `/metrics`, plain HTTP (0: any free one); `/metrics` is then not served on the
   * main port. Absent: `/metrics` is on the main port.
   */
  readonly port: number | undefined;
  /** The address the metrics port binds (default: the host's `--host`). */
  readonly host: string | undefined;
  /** Add the process metrics (`process_*`, `nodejs_*`) to scrapes (default on). */
  readonly process: boolean;
}

/** What the app needs of the metrics: `/metrics` is on the main port unless it has a port of its own. */
export function metricsOnApp<M>(
  metrics: M,
  config: MetricsConfig,
): { metrics: M; token: string | undefined; serve: boolean } {
  return { metrics, token: config.token, serve: config.port === undefined };
}

/** The environment variable of each metrics setting. */
export const METRICS_ENV = {
  metricsToken: 'A2AC_METRICS_TOKEN',
  metricsPort: 'A2AC_METRICS_PORT',
  metricsHost: 'A2AC_METRICS_HOST',
  processMetrics: 'A2AC_PROCESS_METRICS',
} as const;

/** The metrics flags as the CLI parsed them. */
export interface MetricsFlags {
  'metrics-token'?: string;
  'metrics-port'?: string;
  'metrics-host'?: string;
  'no-process-metrics'?: boolean;
}

function fail(message: string): never {
  throw new LocalError('CONFIG_INVALID', message);
}

/**
 * Resolves the metrics settings: flag, then environment variable, then default.
 * @throws LocalError `CONFIG_INVALID` for a port that is no port or is the main port on the same address,
 *   or an `A2AC_PROCESS_METRICS` that is neither true nor false.
 */
export function resolveMetricsConfig(
  flags: MetricsFlags,
  env: Record<string, string | undefined>,
  main: { host: string; port: number },
): MetricsConfig {
  const pick = (flag: string | undefined, key: keyof typeof METRICS_ENV): string | undefined =>
    flag ?? (env[METRICS_ENV[key]] || undefined);
  const portText = pick(flags['metrics-port'], 'metricsPort');
  if (portText !== undefined && (!/^\d+$/.test(portText) || Number(portText) > 65535))
    fail(`metrics port must be an integer between 0 and 65535, got "${portText}"`);
  const port = portText === undefined ? undefined : Number(portText);
  const host = pick(flags['metrics-host'], 'metricsHost');
  if (port !== undefined && port !== 0 && port === main.port && (host ?? main.host) === main.host)
    fail(`--metrics-port ${port} is the host's own port: choose another one`);
  if (host !== undefined && port === undefined) fail('--metrics-host needs --metrics-port');
  return {
    token: pick(flags['metrics-token'], 'metricsToken'),
    port,
    host,
    process:
      flags['no-process-metrics'] === true ? false : processMetricsEnv(env[METRICS_ENV.processMetrics]),
  };
}

function processMetricsEnv(value: string | undefined): boolean {
  if (value === undefined || value === '') return true;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  return fail(`${METRICS_ENV.processMetrics} must be true or false, got "${value}"`);
}
