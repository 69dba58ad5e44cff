import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, runCliProcess } from '../helpers/cli-process.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { defaultModules } from '../../src/cli/host-modules.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

const TOKEN = 'alice=alice-secret-0123456789';

/** A plain-HTTP host with both bindings that requires a token. */
function guardedHost(): ReturnType<typeof startTestHost> {
  return startTestHost({
    flags: { token: [TOKEN], 'no-personal-data': true },
    modules: defaultModules(resolveHostConfig({}, {})),
  });
}

describe('network errors print their cause and the fix', () => {
  it('an untrusted self-signed certificate: DEPTH_ZERO_SELF_SIGNED_CERT, pass --data-dir', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    const run = await runCliProcess(['card', host.url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot reach ${host.url}`);
    expect(run.stderr).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT/);
    expect(run.stderr).toMatch(/pass --data-dir/);
  });

  it('a port where nothing listens: ECONNREFUSED', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await runCliProcess(['acmp', 'capabilities', url]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
    expect(run.stderr).toMatch(/nothing listens at 127\.0\.0\.1:\d+/);
  });

  it('http:// against an HTTPS host: says to use https://', async () => {
    const host = await startTestHost({ flags: { 'tls-self-signed': true } });
    const plain = host.url.replace('https://', 'http://');
    const run = await runCliProcess(['card', plain, '--data-dir', host.config.dataDir]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`use ${host.url}`);
  });

  it('https:// against a plain-HTTP host: says to use http://', async () => {
    const host = await startTestHost();
    const run = await runCliProcess(['card', host.url.replace('http://', 'https://')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`use ${host.url}`);
  });

  it('a --ca file that does not exist: names the flag and the file', async () => {
    const missing = `${tempDir()}/ca.pem`;
    const run = await runCliProcess(['card', 'https://127.0.0.1:1', '--ca', missing]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`cannot read --ca ${missing} (ENOENT)`);
  });
});

describe('one wording for a 401, saying how to pass a token', () => {
  const NO_TOKEN =
    /error \(UNAUTHENTICATED\): \S+ requires a bearer token and none was sent \(HTTP 401\)\. Pass the token with A2AC_TOKEN=<token> in the environment, or --token <token>/;

  it.each([
    [
      'acmp invoke (A2A)',
      ['acmp', 'invoke', 'URL', '--capability', 'summarize', '--input', 'a b.', '--max-price', '1'],
    ],
    ['acp state (A2A)', ['acp', 'state', 'URL', 'tx-1']],
    ['acp state --http', ['acp', 'state', 'URL', 'tx-1', '--http']],
    ['acp events (HTTPS route)', ['acp', 'events', 'URL', 'tx-1']],
  ])('%s', async (_name, args) => {
    const host = await guardedHost();
    const run = await runCliProcess(args.map((a) => (a === 'URL' ? host.url : a)));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(NO_TOKEN);
  });

  it('says the token was not accepted when one was sent', async () => {
    const host = await guardedHost();
    const run = await runCliProcess(['acp', 'state', host.url, 'tx-1'], {
      env: { A2AC_TOKEN: 'not-the-secret-0123456789' },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/did not accept the bearer token sent \(HTTP 401\)/);
  });
});
