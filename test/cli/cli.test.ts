import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

function capture(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdout, stderr };
}

describe('a2a-commerce CLI', () => {
  it('exits 2 with usage for an unknown command', async () => {
    const io = capture();
    expect(await runCli(['frobnicate'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/unknown command "frobnicate"/);
  });

  it('exits 2 with a clear message for an unknown flag', async () => {
    const io = capture();
    expect(await runCli(['serve', '--bogus'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/bogus/);
  });

  it('refuses a bad port value', async () => {
    const io = capture();
    expect(await runCli(['serve', '--port', 'eighty', '--no-tls'], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/port must be an integer/);
  });

  it('refuses conflicting TLS flags', async () => {
    const io = capture();
    expect(await runCli(['serve', '--no-tls', '--tls-self-signed'], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/choose one of/);
  });

  it('refuses an OpenTelemetry exporter the host does not ship, before it listens', async () => {
    const io = capture({ OTEL_TRACES_EXPORTER: 'zipkin' });
    expect(
      await runCli(['serve', '--no-tls', '--no-personal-data', '--port', '0', '--data-dir', tempDir()], io),
    ).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/CONFIG_INVALID.*OTEL_TRACES_EXPORTER/);
    expect(io.stdout.join('\n')).not.toMatch(/listening/);
  });

  it('card fetches, checks and prints a card, trusting the data dir certificate', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    const io = capture();
    expect(await runCli(['card', host.url, '--data-dir', host.config.dataDir], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/JSONRPC\s+A2A 1\.0/);
  });

  it('card fails cleanly when nothing listens', async () => {
    const io = capture();
    expect(await runCli(['card', 'http://127.0.0.1:9'], io)).toBe(1);
    expect(io.stderr.join('\n')).toMatch(/^error/);
  });

  it('migrate migrates a SQLite file and is safe to re-run', async () => {
    const dir = tempDir();
    const io = capture();
    expect(await runCli(['migrate', '--db', `sqlite:${dir}/x.sqlite`], io)).toBe(0);
    expect(await runCli(['migrate', '--db', `sqlite:${dir}/x.sqlite`], io)).toBe(0);
    expect(io.stdout.join('\n')).toMatch(/SDK stores up to date/);
  });
});

describe('configuration precedence', () => {
  it('migrate ignores the serving environment (TLS files, tokens)', async () => {
    const dir = tempDir();
    const io = capture({
      A2AC_TLS_CERT: '/nonexistent.crt',
      A2AC_TLS_KEY: '/nonexistent.key',
      A2AC_TLS_SELF_SIGNED: '1',
      A2AC_TOKENS: 'short',
    });
    expect(await runCli(['migrate', '--db', `sqlite:${dir}/x.sqlite`], io)).toBe(0);
  });

  it('a TLS flag wins over the TLS environment variables', async () => {
    const { resolveHostConfig } = await import('../../src/server/config.js');
    const config = resolveHostConfig({ 'no-tls': true }, { A2AC_TLS_CERT: 'a.crt', A2AC_TLS_KEY: 'a.key' });
    expect(config.tls).toEqual({ mode: 'off' });
    const files = resolveHostConfig({ 'tls-cert': 'b.crt', 'tls-key': 'b.key' }, { A2AC_NO_TLS: '1' });
    expect(files.tls).toEqual({ mode: 'files', cert: 'b.crt', key: 'b.key' });
  });
});
