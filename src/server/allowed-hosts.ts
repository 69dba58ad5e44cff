import { isIPv6 } from 'node:net';
import { networkInterfaces } from 'node:os';
import { LocalError } from '../shared/errors.js';
import type { HostConfig } from './config.js';

/**
 * Which host names requests may address (the `Host` header) and which browser origins may call, by host
 * name and port-agnostic (docs/host.md "Host and Origin"). `hosts` undefined: the `Host` header is not
 * checked (a host with tokens on a public interface).
 */
export interface HostAccess {
  readonly hosts: ReadonlySet<string> | undefined;
  readonly origins: ReadonlySet<string>;
}

/** The names a loopback host is always reachable by. */
const LOCALHOST_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Only the localhost names, for `Host` and `Origin` alike: what an app built without a host config allows. */
export const LOCALHOST_ACCESS: HostAccess = {
  hosts: new Set(LOCALHOST_NAMES),
  origins: new Set(LOCALHOST_NAMES),
};
const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

/**
 * The lower-case host name of a `Host` header value (`name[:port]`, IPv6 in brackets) or a bare name,
 * without a trailing dot; `undefined` when it is not one (user-info, a path, whitespace, an unparsable name).
 */
export function hostNameOf(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || /[\s@/\\?#]/.test(value)) return undefined;
  const bare = value.includes(':') && !value.startsWith('[') && /:.*:/.test(value) ? `[${value}]` : value;
  try {
    // A fully qualified name's trailing dot names the same host (`localhost.` is `localhost`).
    const name = new URL(`http://${bare}`).hostname.replace(/\.$/, '');
    return name === '' ? undefined : name;
  } catch {
    return undefined;
  }
}

/**
 * The `--allowed-host` entries (`A2AC_ALLOWED_HOSTS`), as host names: `a2a.example.com`, `10.0.0.5`,
 * `::1` or `[::1]`; no scheme, port or path.
 * @throws LocalError `CONFIG_INVALID` naming the entry that is not a host name.
 */
export function resolveAllowedHosts(values: readonly string[] | undefined): string[] {
  return (values ?? [])
    .map((v) => v.trim())
    .filter((v) => v !== '')
    .map((v) => {
      // A colon only in an IPv6 address: `name:port` is refused, not read as `name`.
      const name = !v.includes(':') || isIPv6(v.replace(/^\[(.*)\]$/, '$1')) ? hostNameOf(v) : undefined;
      if (name === undefined)
        throw new LocalError(
          'CONFIG_INVALID',
          `--allowed-host entry "${v}" must be a host name such as a2a.example.com or 10.0.0.5 (no scheme, port or path)`,
        );
      return name;
    });
}

/** Whether the host listens on loopback only (a name a browser on this machine reaches through DNS). */
function isLoopback(host: string): boolean {
  const name = hostNameOf(host);
  return name === 'localhost' || name === '[::1]' || (name?.startsWith('127.') ?? false);
}

/**
 * The host's {@link HostAccess}: the localhost names, the listen address (every interface address when it
 * is a wildcard), the host of `--public-url`, and `--allowed-host`. The `Host` header is checked when the
 * host has no tokens, listens on loopback, or `--allowed-host` is given; the `Origin` header always.
 */
export function hostAccessOf(
  config: Pick<HostConfig, 'host' | 'publicUrl' | 'tokens' | 'allowedHosts'>,
  interfaces: () => string[] = interfaceAddresses,
): HostAccess {
  const listen = WILDCARDS.has(config.host) ? interfaces() : [config.host];
  const names = [
    ...LOCALHOST_NAMES,
    ...listen,
    ...(config.publicUrl === undefined ? [] : [new URL(config.publicUrl).host]),
    ...config.allowedHosts,
  ]
    .map(hostNameOf)
    .filter((n): n is string => n !== undefined);
  const allowed = new Set(names);
  const checked = config.tokens.length === 0 || isLoopback(config.host) || config.allowedHosts.length > 0;
  return { hosts: checked ? allowed : undefined, origins: allowed };
}

/** Every address of this machine's interfaces. */
function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}
