import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveHostConfig, type HostFlags } from './config.js';
import { errorCode } from '../shared/errors.js';

const ALICE = 'alice-secret-0123456789abcdef';
const BOB = 'bobby-secret-0123456789abcdef';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length > 0) rmSync(dirs.pop()!, { recursive: true, force: true });
});

function tokensFile(text: string, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), 'a2ac-tokens-'));
  dirs.push(dir);
  const file = join(dir, 'tokens');
  writeFileSync(file, text);
  chmodSync(file, mode);
  return file;
}

function tokens(flags: HostFlags, env: Record<string, string> = {}) {
  return resolveHostConfig(flags, env).tokens;
}

/** The CONFIG_INVALID message the configuration is refused with ('accepted' when it is not). */
function refusal(flags: HostFlags, env: Record<string, string> = {}): string {
  try {
    resolveHostConfig(flags, env);
  } catch (error) {
    return `${String(errorCode(error))}: ${(error as Error).message}`;
  }
  return 'accepted';
}

describe('bearer tokens: the identity comes from the credential', () => {
  it('names the agent of a `name=secret` token agent:<name>', () => {
    expect(tokens({ token: [`alice=${ALICE}`] })).toEqual([{ identity: 'agent:alice', secret: ALICE }]);
  });

  it('derives the identity of an unnamed token from the token itself', () => {
    const digest = createHash('sha256').update(BOB).digest('hex');
    expect(tokens({ token: [BOB] })).toEqual([{ identity: `token:${digest.slice(0, 32)}`, secret: BOB }]);
  });

  it('reads A2AC_TOKENS the same way', () => {
    expect(tokens({}, { A2AC_TOKENS: `alice=${ALICE}, bob=${BOB}` }).map((t) => t.identity)).toEqual([
      'agent:alice',
      'agent:bob',
    ]);
  });

  it('keeps `=` inside a secret after the name', () => {
    expect(tokens({ token: [`alice=${ALICE}==`] })).toEqual([
      { identity: 'agent:alice', secret: `${ALICE}==` },
    ]);
  });

  it('refuses a name used twice', () => {
    expect(refusal({ token: [`alice=${ALICE}`, `alice=${BOB}`] })).toMatch(
      /^CONFIG_INVALID: .*alice.*more than once/,
    );
  });

  it('refuses a secret listed twice (one credential, one identity)', () => {
    expect(refusal({ token: [`alice=${ALICE}`, `bob=${ALICE}`] })).toMatch(/^CONFIG_INVALID: .*same secret/);
  });

  it('refuses a malformed name', () => {
    for (const bad of [
      `Alice=${ALICE}`,
      `al ice=${ALICE}`,
      `=${ALICE}`,
      `-x=${ALICE}`,
      `${'a'.repeat(65)}=${ALICE}`,
    ]) {
      expect(refusal({ token: [bad] })).toMatch(/^CONFIG_INVALID: .*token name/);
    }
  });

  it('keeps the 16-character minimum for secrets, named or not', () => {
    expect(refusal({ token: ['alice=short-secret'] })).toMatch(/^CONFIG_INVALID: .*16 characters/);
    expect(refusal({ token: ['short-secret'] })).toMatch(/^CONFIG_INVALID: .*16 characters/);
  });
});

describe('the tokens file (--tokens-file, A2AC_TOKENS_FILE)', () => {
  it('reads one token a line, skipping blank lines and # comments', () => {
    const file = tokensFile(`# who may call\n\nalice=${ALICE}\n  # revoked: carol=...\nbob=${BOB}\r\n`);
    expect(tokens({ 'tokens-file': file }).map((t) => t.identity)).toEqual(['agent:alice', 'agent:bob']);
    expect(tokens({}, { A2AC_TOKENS_FILE: file }).map((t) => t.identity)).toEqual([
      'agent:alice',
      'agent:bob',
    ]);
  });

  it('adds to the tokens given with --token, names unique across both', () => {
    const file = tokensFile(`alice=${ALICE}\n`);
    expect(
      tokens({ 'tokens-file': file, token: [`bob=${BOB}`] })
        .map((t) => t.identity)
        .sort(),
    ).toEqual(['agent:alice', 'agent:bob']);
    expect(refusal({ 'tokens-file': file, token: [`alice=${BOB}`] })).toMatch(/^CONFIG_INVALID: /);
  });

  it.skipIf(process.platform === 'win32')('refuses a file that group or others may read', () => {
    const file = tokensFile(`alice=${ALICE}\n`, 0o644);
    expect(refusal({ 'tokens-file': file })).toMatch(/^CONFIG_INVALID: .*chmod 600/);
  });

  it('names the line of a malformed entry, never its secret', () => {
    const file = tokensFile(`alice=${ALICE}\nBad Name=${BOB}\n`);
    const refused = refusal({ 'tokens-file': file });
    expect(refused).toMatch(/^CONFIG_INVALID: tokens file line 2/);
    expect(refused).not.toContain(BOB);
  });

  it('refuses a file it cannot read', () => {
    expect(refusal({ 'tokens-file': join(tmpdir(), 'a2ac-no-such-tokens-file') })).toMatch(
      /^CONFIG_INVALID: /,
    );
  });
});

describe('the gRPC port (docs/host.md "gRPC")', () => {
  it('is off by default and taken from the flag before A2AC_GRPC_PORT', () => {
    expect(resolveHostConfig({}, {}).grpcPort).toBeUndefined();
    expect(resolveHostConfig({}, { A2AC_GRPC_PORT: '9443' }).grpcPort).toBe(9443);
    expect(resolveHostConfig({ 'grpc-port': '0' }, { A2AC_GRPC_PORT: '9443' }).grpcPort).toBe(0);
  });

  it('refuses a port that is not one', () => {
    expect(refusal({ 'grpc-port': 'grpc' })).toBe('CONFIG_INVALID: gRPC port must be an integer, got "grpc"');
    expect(refusal({ 'grpc-port': '70000' })).toBe(
      'CONFIG_INVALID: gRPC port must be between 0 and 65535, got 70000',
    );
  });
});

describe('tokens built by library callers', () => {
  it('names an unset environment variable instead of crashing', () => {
    // What `token: [process.env.AGENT_TOKEN!]` passes when AGENT_TOKEN is unset.
    const flags = { token: [undefined as unknown as string] };
    expect(refusal(flags)).toMatch(
      /token entry 1 is undefined, not a string: is the environment variable it comes from set\?/,
    );
  });
});

describe('callers identified by DID (--accept-did-callers, A2AC_ACCEPT_DID_CALLERS)', () => {
  it('is off by default and taken from the flag before the variable', () => {
    expect(resolveHostConfig({}, {}).acceptDidCallers).toBe(false);
    expect(resolveHostConfig({}, { A2AC_ACCEPT_DID_CALLERS: 'true' }).acceptDidCallers).toBe(true);
    expect(
      resolveHostConfig({ 'accept-did-callers': false }, { A2AC_ACCEPT_DID_CALLERS: 'on' }).acceptDidCallers,
    ).toBe(false);
  });

  it('refuses a variable that is not a boolean', () => {
    expect(refusal({}, { A2AC_ACCEPT_DID_CALLERS: 'maybe' })).toContain('A2AC_ACCEPT_DID_CALLERS');
  });
});

describe('operator credentials of the console (--operator-token, tokens-file role operator)', () => {
  const OPS = 'operator-secret-0123456789abc';

  it('reads them from the flag, the variable and operator lines of the tokens file, apart from caller tokens', () => {
    const file = tokensFile(`alice=${ALICE}\noperator ops=${OPS}\n`);
    const config = resolveHostConfig({ 'tokens-file': file }, {});
    expect(config.tokens.map((t) => t.identity)).toEqual(['agent:alice']);
    expect(config.operatorTokens.map((t) => t.identity)).toEqual(['agent:ops']);
    expect(resolveHostConfig({ 'operator-token': [`ops=${OPS}`] }, {}).operatorTokens).toHaveLength(1);
    expect(resolveHostConfig({}, { A2AC_OPERATOR_TOKEN: `ops=${OPS}` }).operatorTokens).toHaveLength(1);
    expect(resolveHostConfig({}, {}).operatorTokens).toEqual([]);
  });

  it('refuses an operator secret that is also a caller token, without quoting it', () => {
    const refused = refusal({ token: [`alice=${ALICE}`], 'operator-token': [`ops=${ALICE}`] });
    expect(refused).toMatch(/^CONFIG_INVALID: .*must not also be a caller token/);
    expect(refused).not.toContain(ALICE);
  });

  it('refuses a short operator secret, naming where it came from', () => {
    expect(refusal({ 'operator-token': ['ops=short'] })).toMatch(/^CONFIG_INVALID: --operator-token.*16/);
  });
});
