import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchPublicOnly, isPublicAddress } from './public-fetch.js';

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/** A TCP server on loopback that counts the connections it gets. */
async function countingServer(): Promise<{ port: number; connections: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, connections: () => count };
}

describe('isPublicAddress (RFC 6890 special-purpose ranges are not public)', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.1.2.3', false],
    ['172.20.0.1', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['::1', false],
    ['::', false],
    ['fd00::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['not an address', false],
    ['8.8.8.8', true],
    ['93.184.216.34', true],
    ['2001:4860:4860::8888', true],
    ['::ffff:8.8.8.8', true],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('fetchPublicOnly', () => {
  it('refuses a loopback IP literal before connecting', async () => {
    const server = await countingServer();
    await expect(fetchPublicOnly(`http://127.0.0.1:${server.port}/.well-known/did.json`)).rejects.toThrow(
      'fetch failed',
    );
    await expect(fetchPublicOnly(`http://[::ffff:127.0.0.1]:${server.port}/`)).rejects.toThrow();
    expect(server.connections()).toBe(0);
  });

  it('refuses a name that resolves to loopback, checked when connecting', async () => {
    const server = await countingServer();
    const refused = await fetchPublicOnly(`http://localhost:${server.port}/`).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TypeError);
    expect(server.connections()).toBe(0);
  });
});
