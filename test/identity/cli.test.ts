import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { acmpHost } from '../acmp/helpers.js';
import { cleanup, tempDir } from '../helpers/host.js';

afterEach(cleanup);

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env: {}, stdout, stderr };
}

describe('a2a-commerce acmp identity (Layer 7 §3)', () => {
  it("a host provisioned with keys new proves its did:web to another party's CLI over HTTPS", async () => {
    const dataDir = tempDir();
    const setup = capture();
    expect(await runCli(['keys', 'new', '--data-dir', dataDir], setup)).toBe(0);
    const host = await acmpHost({ dataDir, flags: { 'tls-self-signed': true } });
    const did = `did:web:${encodeURIComponent(new URL(host.url).host)}`;
    const io = capture();
    expect(await runCli(['acmp', 'identity', host.url, '--data-dir', dataDir], io)).toBe(0);
    expect(io.stdout).toEqual([`verified ${did} (${did}#key-1, EdDSA)`]);
    const wrong = capture();
    expect(
      await runCli(
        ['acmp', 'identity', host.url, '--data-dir', dataDir, '--did', 'did:web:other.example'],
        wrong,
      ),
    ).toBe(1);
    expect(wrong.stderr.join('\n')).toMatch(/^error -36001 identity_proof_failed: .*"check":"did"/);
  });

  it('a host without a DID: -36001, nothing to expect', async () => {
    const host = await acmpHost({ flags: { 'identity-key': join(tempDir(), 'none.json') } });
    const io = capture();
    expect(await runCli(['acmp', 'identity', host.url], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/-36001/);
  });
});
