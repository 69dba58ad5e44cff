import type { AgentExecutor } from '@a2a-js/sdk/server';
import type { DidResolver, Signer } from '../../src/acmp/identity/index.js';
import { resolveHostConfig, type HostConfig, type HostFlags } from '../../src/server/config.js';
import { startHost, type RunningHost } from '../../src/server/host.js';
import type { HostModule } from '../../src/server/module.js';
import type { Clock } from '../../src/shared/clock.js';
import type { IdSource } from '../../src/shared/ids.js';
import type { Logger } from '../../src/shared/logger.js';
import { onCleanup, tempDir } from './cleanup.js';

// The cleanup registry lives in ./cleanup.js (no server imports); host tests reach it here too.
export { cleanup, onCleanup, tempDir } from './cleanup.js';

export interface TestHostOptions {
  flags?: HostFlags;
  clock?: Clock;
  modules?: HostModule[];
  executor?: AgentExecutor;
  dataDir?: string;
  migrate?: boolean;
  logger?: Logger;
  /** Grace of gRPC calls in flight at close (the host's default when absent). */
  grpcGraceMs?: number;
  /** The host's key (its card is served signed). */
  signer?: Signer;
  /** Resolves the DIDs of callers (with `accept-did-callers`). */
  didResolver?: DidResolver;
  /** The lean invoke path (default on); off: every request takes the SDK's path. */
  leanInvoke?: boolean;
  ids?: IdSource;
}

/** Starts a real host on 127.0.0.1:0 (TLS off unless flags say otherwise); closed by {@link cleanup}. */
export async function startTestHost(
  options: TestHostOptions = {},
): Promise<RunningHost & { config: HostConfig }> {
  // The request rate is off unless a test sets it: suites send bursts from one address.
  const flags: HostFlags = {
    host: '127.0.0.1',
    port: '0',
    'no-tls': true,
    'rate-limit': '0',
    ...options.flags,
  };
  if (flags['tls-self-signed'] || flags['tls-cert'] || flags['no-tls'] === false) delete flags['no-tls'];
  const config = resolveHostConfig({ 'data-dir': options.dataDir ?? tempDir(), ...flags }, {});
  const host = await startHost(config, {
    modules: options.modules,
    executor: options.executor,
    migrate: options.migrate,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.grpcGraceMs !== undefined ? { grpcGraceMs: options.grpcGraceMs } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.signer ? { signer: options.signer } : {}),
    ...(options.didResolver ? { didResolver: options.didResolver } : {}),
    ...(options.leanInvoke !== undefined ? { leanInvoke: options.leanInvoke } : {}),
    ...(options.ids ? { ids: options.ids } : {}),
  });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await host.close();
  };
  onCleanup(close);
  return {
    url: host.url,
    grpcUrl: host.grpcUrl,
    metricsUrl: host.metricsUrl,
    database: host.database,
    tls: host.tls,
    drain: () => host.drain(),
    close,
    config,
  };
}

/** POSTs a JSON body and returns status, headers and parsed body. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
