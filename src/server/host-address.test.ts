import { describe, expect, it } from 'vitest';
import type { TlsConfig } from './config.js';
import { baseUrlOf, grpcAddressOf, isSecureHost, urlHostOf } from './host-address.js';

const SELF_SIGNED: TlsConfig = { mode: 'self-signed' };
const OFF: TlsConfig = { mode: 'off' };

describe('isSecureHost', () => {
  it('is secure when the host serves TLS and no public URL says otherwise', () => {
    expect(isSecureHost({ tls: SELF_SIGNED, publicUrl: undefined })).toBe(true);
    expect(isSecureHost({ tls: SELF_SIGNED, publicUrl: 'https://agent.example.com' })).toBe(true);
  });

  it('is not secure with TLS off, whatever the public URL says', () => {
    expect(isSecureHost({ tls: OFF, publicUrl: 'https://agent.example.com' })).toBe(false);
  });

  it('is not secure behind a plain-http public URL, whatever the socket does', () => {
    expect(isSecureHost({ tls: SELF_SIGNED, publicUrl: 'http://agent.example.com' })).toBe(false);
  });
});

describe('urlHostOf', () => {
  it('brackets an IPv6 address and turns the wildcard into loopback', () => {
    expect(urlHostOf('::1')).toBe('[::1]');
    expect(urlHostOf('0.0.0.0')).toBe('127.0.0.1');
    expect(urlHostOf('localhost')).toBe('localhost');
  });
});

describe('baseUrlOf', () => {
  it('builds the URL from the scheme and the address the host listens on', () => {
    expect(baseUrlOf({ host: '0.0.0.0', publicUrl: undefined }, { tls: true, port: 41234 })).toBe(
      'https://127.0.0.1:41234',
    );
    expect(baseUrlOf({ host: '::1', publicUrl: undefined }, { tls: false, port: 80 })).toBe(
      'http://[::1]:80',
    );
  });

  it('prefers the public URL', () => {
    expect(
      baseUrlOf({ host: '127.0.0.1', publicUrl: 'https://agent.example.com' }, { tls: false, port: 8080 }),
    ).toBe('https://agent.example.com');
  });
});

describe('grpcAddressOf', () => {
  it('lists the public host name with the gRPC port', () => {
    expect(grpcAddressOf({ host: '0.0.0.0', publicUrl: 'https://agent.example.com:8443' }, 50051)).toBe(
      'agent.example.com:50051',
    );
  });

  it('lists the listening address without a public URL', () => {
    expect(grpcAddressOf({ host: '0.0.0.0', publicUrl: undefined }, 50051)).toBe('127.0.0.1:50051');
    expect(grpcAddressOf({ host: '::1', publicUrl: undefined }, 50051)).toBe('[::1]:50051');
  });
});
