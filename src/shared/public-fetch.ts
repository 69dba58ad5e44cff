import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { LocalError } from './errors.js';

/**
 * Addresses that are not on the public internet: this host, private and shared ranges, link-local
 * (cloud metadata services), multicast and reserved (RFC 6890 special-purpose registries).
 */
const NOT_PUBLIC = (() => {
  const list = new BlockList();
  for (const [net, bits] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const)
    list.addSubnet(net, bits, 'ipv4');
  for (const [net, bits] of [
    ['::', 128],
    ['::1', 128],
    ['64:ff9b:1::', 48],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ] as const)
    list.addSubnet(net, bits, 'ipv6');
  return list;
})();

/** Whether `address` (an IP literal) is a public internet address; IPv4-mapped IPv6 is judged as IPv4. */
export function isPublicAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return isPublicAddress(mapped);
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A DNS lookup that fails for names resolving to any non-public address (checked at connect time). */
const publicLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (refused || addresses.length === 0) {
      const why = new LocalError('REFUSED', `${hostname} resolves to an address that is not public`);
      return callback(Object.assign(why, { code: 'ENOTPUBLIC' }), '', 0);
    }
    if (options.all === true) return (callback as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    return callback(null, first.address, first.family);
  });
};

let agent: Agent | undefined;

/**
 * A fetch that reaches public internet addresses only: a URL naming a non-public IP is refused before
 * anything is sent, and a name is refused when DNS answers any non-public address — checked when the
 * connection is made, so a name re-bound between a check and the connection cannot slip through. For
 * servers that fetch URLs a stranger chose (a caller's `did:web`), so that they cannot be made to reach
 * this host, its network or a cloud metadata service (docs/acmp-identity.md "Resolution").
 */
export const fetchPublicOnly: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && !isPublicAddress(host))
    throw new TypeError('fetch failed', {
      cause: new LocalError('REFUSED', `${host} is not a public address`),
    });
  agent ??= new Agent({ connect: { lookup: publicLookup } });
  return await undiciFetch(url, { ...(init as object), dispatcher: agent });
};
