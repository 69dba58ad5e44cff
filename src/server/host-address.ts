import type { HostConfig } from './config.js';

/**
 * Whether the interface clients are told to use is TLS: a plain-http public URL is not, whatever the
 * socket does. Modules that carry personal data refuse to start on a host that is not secure.
 */
export function isSecureHost(config: Pick<HostConfig, 'tls' | 'publicUrl'>): boolean {
  return config.tls.mode !== 'off' && !(config.publicUrl?.startsWith('http://') ?? false);
}

/** A listening address as the host of a URL: IPv6 in brackets, the wildcard `0.0.0.0` as loopback. */
export function urlHostOf(host: string): string {
  if (host.includes(':')) return `[${host}]`;
  return host === '0.0.0.0' ? '127.0.0.1' : host;
}

/** The base URL clients use: the public URL when set, else the scheme and address the host listens on. */
export function baseUrlOf(
  config: Pick<HostConfig, 'host' | 'publicUrl'>,
  listening: { tls: boolean; port: number },
): string {
  return (
    config.publicUrl ?? `${listening.tls ? 'https' : 'http'}://${urlHostOf(config.host)}:${listening.port}`
  );
}

/** The gRPC `host:port` the card lists: the public URL's host name when set, else the listening address. */
export function grpcAddressOf(config: Pick<HostConfig, 'host' | 'publicUrl'>, port: number): string {
  return `${config.publicUrl ? new URL(config.publicUrl).hostname : urlHostOf(config.host)}:${port}`;
}
