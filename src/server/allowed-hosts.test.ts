import { describe, expect, it } from 'vitest';
import { hostAccessOf, hostNameOf, resolveAllowedHosts } from './allowed-hosts.js';
import { resolveHostConfig, type HostFlags } from './config.js';

const TOKEN = 'alice=alice-secret-0123456789abcdef';

function access(flags: HostFlags, interfaces: string[] = ['10.0.0.7', 'fe80::1']) {
  return hostAccessOf(resolveHostConfig({ 'no-tls': true, ...flags }, {}), () => interfaces);
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const sorted = (names: ReadonlySet<string> | undefined) => (names ? [...names].sort() : names);

describe('hostNameOf', () => {
  it('reads the host name of a Host header value, port-agnostic and lower-case', () => {
    expect(hostNameOf('Example.COM:8443')).toBe('example.com');
    expect(hostNameOf('localhost.')).toBe('localhost');
    expect(hostNameOf('[::1]:80')).toBe('[::1]');
    expect(hostNameOf('::1')).toBe('[::1]');
  });

  it('reads nothing from user-info, paths, whitespace or an empty value', () => {
    for (const value of ['evil@127.0.0.1', '127.0.0.1/x', 'a b', '', undefined, 'a\\b'])
      expect(hostNameOf(value), String(value)).toBeUndefined();
  });
});

describe('which hosts a host answers (docs/host.md "Host and Origin")', () => {
  it('checks Host on a tokenless host: localhost names and the listen address', () => {
    expect(sorted(access({ host: '127.0.0.1' }).hosts)).toEqual(['127.0.0.1', '[::1]', 'localhost']);
  });

  it('checks Host on a loopback host with tokens too', () => {
    expect(access({ host: '127.0.0.1', token: [TOKEN] }).hosts).toBeDefined();
  });

  it('lets any Host reach a host with tokens on a public interface, but still checks Origin', () => {
    const a = access({ host: '0.0.0.0', token: [TOKEN] });
    expect(a.hosts).toBeUndefined();
    expect(a.origins.has('10.0.0.7')).toBe(true);
    expect(a.origins.has('evil.example')).toBe(false);
  });

  it('checks Host again on a public host with tokens once --allowed-host is given', () => {
    const a = access({ host: '0.0.0.0', token: [TOKEN], 'allowed-host': ['a2a.example.com'] });
    expect(a.hosts?.has('a2a.example.com')).toBe(true);
  });

  it('adds every interface address for a wildcard listen address, and the host of --public-url', () => {
    const a = access({ host: '0.0.0.0', 'public-url': 'https://Agent.Example.com:9443' });
    expect(sorted(a.hosts)).toEqual(
      ['127.0.0.1', '[::1]', 'localhost', '10.0.0.7', '[fe80::1]', 'agent.example.com'].sort(),
    );
  });
});

describe('--allowed-host entries', () => {
  it('takes names and addresses, IPv6 with or without brackets', () => {
    expect(resolveAllowedHosts(['a2a.example.com', ' 10.0.0.5 ', '::1', '[fe80::2]', ''])).toEqual([
      'a2a.example.com',
      '10.0.0.5',
      '[::1]',
      '[fe80::2]',
    ]);
  });

  it.each([
    'https://a2a.example.com',
    'a2a.example.com:443',
    'cafe:80',
    '[::1]:80',
    'a2a.example.com/x',
    'a b',
    'u@h',
  ])('refuses %s with CONFIG_INVALID', (entry) => {
    expect(thrown(() => resolveAllowedHosts([entry]))).toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('reads A2AC_ALLOWED_HOSTS, comma-separated', () => {
    expect(resolveHostConfig({}, { A2AC_ALLOWED_HOSTS: 'a.example,b.example' }).allowedHosts).toEqual([
      'a.example',
      'b.example',
    ]);
  });
});
