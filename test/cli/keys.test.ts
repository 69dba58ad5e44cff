import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { cleanup, tempDir } from '../helpers/host.js';

afterEach(cleanup);

function capture(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdout, stderr };
}

describe('a2a-commerce keys (docs/acmp-identity.md "Where keys live")', () => {
  it('new, list and retire keys in <data dir>/identity/keys.json, printing no private key', async () => {
    const dataDir = tempDir();
    const io = capture();
    expect(await runCli(['keys', 'new', '--data-dir', dataDir], io)).toBe(0);
    expect(await runCli(['keys', 'new', '--data-dir', dataDir], io)).toBe(0);
    const path = join(dataDir, 'identity', 'keys.json');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(
      await runCli(['keys', 'list', '--data-dir', dataDir, '--public-url', 'https://a.example:8443'], io),
    ).toBe(0);
    const listing = io.stdout.join('\n');
    expect(listing).toMatch(/^key-1 {2}Ed25519 .* did:key:z6Mk\S+ {2}did:web:a\.example%3A8443#key-1$/m);
    expect(listing).toMatch(/^key-2 /m);
    const privateD = (JSON.parse(readFileSync(path, 'utf8')) as { keys: { private_jwk: { d: string } }[] })
      .keys;
    for (const key of privateD) expect(listing).not.toContain(key.private_jwk.d);
    expect(await runCli(['keys', 'retire', 'key-1', '--data-dir', dataDir], io)).toBe(0);
    io.stdout.length = 0;
    await runCli(['keys', 'list', '--data-dir', dataDir], io);
    expect(io.stdout.map((l) => l.split(' ')[0])).toEqual(['key-2']);
  });

  it('uses A2AC_IDENTITY_KEY when set; an unknown key id exits 1 naming it', async () => {
    const path = join(tempDir(), 'buyer-keys.json');
    const io = capture({ A2AC_IDENTITY_KEY: path });
    expect(await runCli(['keys', 'new'], io)).toBe(0);
    expect(io.stdout.join('\n')).toContain(path);
    expect(await runCli(['keys', 'retire', 'key-7'], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/key-7/);
    expect(await runCli(['keys', 'rotate'], io)).toBe(2);
  });
});
