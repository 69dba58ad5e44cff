import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { canonicalBytes } from '../../src/shared/jcs.js';
import { anonymousState, eventOp } from '../helpers/acp-builders.js';
import { FIXTURE_DIR } from '../helpers/acp-fixtures.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { freshDelta, freshSnapshot, startAcpHost, txId, type AcpTestHost } from './helpers.js';

function capture(env: CliIo['env'] = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdout, stderr };
}

/** Runs the CLI with an environment and returns exit code and output. */
async function cliWithEnv(
  env: CliIo['env'],
  argv: string[],
): Promise<{ code: number; out: string; err: string }> {
  const io = capture(env);
  const code = await runCli(argv, io);
  return { code, out: io.stdout.join('\n'), err: io.stderr.join('\n') };
}

/** Runs the CLI and returns exit code and output. */
function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return cliWithEnv({}, argv);
}

let dir: string;
let host: AcpTestHost;
let trust: string[];
beforeAll(async () => {
  dir = tempDir('a2ac-acp-cli-');
  host = await startAcpHost();
  trust = ['--data-dir', host.config.dataDir];
});
afterAll(cleanup);

function file(name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
}

describe('a2a-commerce acp validate', () => {
  it('accepts a valid envelope and says what it is', async () => {
    const result = await cli('acp', 'validate', join(FIXTURE_DIR, 'valid/lead-snapshot.json'));
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/valid snapshot urn:uuid:\S+ of transaction tx-lead-1; carries personal data/);
  });

  it('lists every schema and policy problem with its JSON Pointer and exits 1', async () => {
    const lead = freshSnapshot('tx-cli');
    const bad = {
      ...freshDelta(lead, [{ op: 'replace', path: '/events/0', value: {} }, eventOp('ev-ok')]),
      envelope_id: 'not-a-urn',
      extra_field: true,
    };
    const result = await cli('acp', 'validate', file('bad.json', bad));
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/invalid envelope, \d+ problem/);
    expect(result.err).toContain('/envelope_id  pattern');
    expect(result.err).toContain('/extra_field  additionalProperties');
    expect(result.err).toContain('/patch/0  events_append_only');
  });

  it('reports a file that is not JSON', async () => {
    const path = join(dir, 'broken.json');
    writeFileSync(path, '{"acp_version":');
    expect((await cli('acp', 'validate', path)).code).toBe(1);
  });
});

describe('a2a-commerce acp send / state / events', () => {
  it('sends over A2A and over HTTPS and prints the ack', async () => {
    const lead = freshSnapshot(txId('cli-send'));
    const overA2A = await cli('acp', 'send', host.url, file('lead.json', lead), ...trust);
    expect(overA2A.code).toBe(0);
    expect(JSON.parse(overA2A.out)).toMatchObject({
      acp_ack: { envelope_id: lead.envelope_id, transaction_id: lead.transaction_id },
    });
    const next = freshDelta(lead, [eventOp('ev-cli-1')]);
    const overHttps = await cli('acp', 'send', host.url, file('next.json', next), '--http', ...trust);
    expect(overHttps.code).toBe(0);
    expect(JSON.parse(overHttps.out)).toMatchObject({ acp_ack: { envelope_id: next.envelope_id } });
  });

  it('prints the coded error of a refused envelope and exits 1', async () => {
    const orphan = freshDelta(
      { envelope_id: freshSnapshot('x').envelope_id, transaction_id: txId('cli-orphan') },
      [eventOp('ev-o')],
    );
    for (const binding of [[], ['--http']]) {
      const result = await cli('acp', 'send', host.url, file('orphan.json', orphan), ...binding, ...trust);
      expect(result.code).toBe(1);
      expect(result.err).toMatch(/^error ACP_PARENT_UNKNOWN: /);
    }
  });

  it('refuses locally to send personal data to an http: URL', async () => {
    const cleartext = await startAcpHost({ flags: { 'no-tls': true, 'no-personal-data': true } });
    const result = await cli(
      'acp',
      'send',
      cleartext.url,
      file('pii.json', freshSnapshot(txId('cli-pii'))),
      '--http',
    );
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^error ACP_TRANSPORT_INSECURE/);
    expect(cleartext.a2aCalls).toHaveLength(0);
  });

  it('prints identical state bytes over A2A and HTTPS', async () => {
    const lead = freshSnapshot(txId('cli-state'));
    await host.http.transport.send(lead, canonicalBytes(lead));
    const overA2A = await cli('acp', 'state', host.url, lead.transaction_id, ...trust);
    const overHttps = await cli('acp', 'state', host.url, lead.transaction_id, '--http', ...trust);
    expect(overA2A.code).toBe(0);
    expect(overHttps.out).toBe(overA2A.out);
    expect(overA2A.out).toBe((await host.http.state(lead.transaction_id)).bytes.toString('utf8'));
  });

  it('prints the event stream as JSON lines, and follows it', async () => {
    const lead = freshSnapshot(txId('cli-events'), anonymousState());
    await host.http.transport.send(lead, canonicalBytes(lead));
    const page = await cli('acp', 'events', host.url, lead.transaction_id, ...trust);
    expect(page.code).toBe(0);
    expect(page.out.split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { seq: 1, event: lead.events[0] },
    ]);
    const following = cli(
      'acp',
      'events',
      host.url,
      lead.transaction_id,
      '--follow',
      '--after',
      '1',
      '--count',
      '1',
      ...trust,
    );
    const next = freshDelta(lead, [eventOp('ev-followed')]);
    await host.http.transport.send(next, canonicalBytes(next));
    const followed = await following;
    expect(followed.code).toBe(0);
    expect(JSON.parse(followed.out)).toMatchObject({ seq: 2, event: { event_id: 'ev-followed' } });
  });

  it('answers an unknown transaction with its code', async () => {
    const result = await cli('acp', 'state', host.url, 'tx-nobody', '--http', ...trust);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^error ACP_TRANSACTION_UNKNOWN/);
  });

  it('sends the bearer token on both bindings (--token)', async () => {
    const token = 'acp-cli-token-0123456789';
    const guarded = await startAcpHost({ flags: { 'tls-self-signed': true, token: [token] } });
    const trustGuarded = ['--data-dir', guarded.config.dataDir];
    const lead = freshSnapshot(txId('cli-token'));
    const path = file('token.json', lead);
    for (const binding of [[], ['--http']]) {
      const refused = await cli('acp', 'send', guarded.url, path, ...binding, ...trustGuarded);
      expect(refused).toMatchObject({
        code: 1,
        err: expect.stringMatching(/requires a bearer token and none was sent/) as unknown,
      });
      expect(
        (await cli('acp', 'send', guarded.url, path, ...binding, '--token', token, ...trustGuarded)).code,
      ).toBe(0);
    }
  });

  it('takes the bearer token from A2AC_TOKEN when --token is absent', async () => {
    const token = 'acp-cli-env-token-0123456789';
    const guarded = await startAcpHost({ flags: { 'tls-self-signed': true, token: [token] } });
    const path = file('env-token.json', freshSnapshot(txId('cli-env-token')));
    const argv = ['acp', 'send', guarded.url, path, '--http', '--data-dir', guarded.config.dataDir];
    expect((await cliWithEnv({ A2AC_TOKEN: token }, argv)).code).toBe(0);
    const wrong = await cliWithEnv({ A2AC_TOKEN: 'not-the-token-0123456789' }, argv);
    expect(wrong.err).toMatch(/HTTP 401/);
  });

  it('exits 2 with usage for an unknown sub-command or a missing argument', async () => {
    expect((await cli('acp', 'frobnicate')).code).toBe(2);
    const missing = await cli('acp', 'send', host.url);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('Usage: a2a-commerce acp');
  });
});
