import { readFileSync, statSync } from 'node:fs';
import { errorCode, LocalError } from '../shared/errors.js';
import { parseBearerToken, type BearerToken } from '../shared/identity.js';
import { roleOfLine, type RoledEntry } from './operator-config.js';

function fail(message: string): never {
  throw new LocalError('CONFIG_INVALID', message);
}

/**
 * The accepted tokens: `--token`/`A2AC_TOKENS` entries, then the lines of the tokens file. Each entry is
 * `name=secret` (identity `agent:<name>`) or a bare secret (identity `token:<digest>`); see
 * src/shared/identity.ts. Names and secrets must be unique; messages never quote a secret.
 */
export function resolveTokens(entries: string[] | undefined, fromFile: readonly RoledEntry[]): BearerToken[] {
  // Library callers build the list themselves (`token: [process.env.X]`): an unset variable is a mistake
  // to name, not a crash.
  for (const [i, e] of (entries ?? []).entries()) {
    if (typeof e !== 'string')
      fail(
        `token entry ${i + 1} is ${String(e)}, not a string: is the environment variable it comes from set?`,
      );
  }
  const listed = (entries ?? [])
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((e) => ({ entry: e, where: '--token/A2AC_TOKENS' }));
  const all = [...listed, ...fromFile];
  const tokens = all.map(({ entry, where }) => {
    const parsed = parseBearerToken(entry);
    return 'refused' in parsed ? fail(`${where}: ${parsed.refused}`) : parsed;
  });
  const secrets = new Set<string>();
  const identities = new Set<string>();
  for (const t of tokens) {
    if (secrets.has(t.secret)) fail('the same secret is listed more than once');
    if (identities.has(t.identity))
      fail(`token name "${t.identity.replace(/^agent:/, '')}" is used more than once`);
    secrets.add(t.secret);
    identities.add(t.identity);
  }
  return tokens;
}

/**
 * Reads a tokens file: one `name=secret` (or bare secret) a line, `operator name=secret` for an operator
 * credential of the console; blank lines and lines starting with `#` are skipped. Like an SSH key, the file must not be readable or writable by group or others (POSIX).
 */
export function readTokensFile(path: string): RoledEntry[] {
  let text: string;
  try {
    const mode = statSync(path).mode;
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      fail(`tokens file ${path} is accessible by group or others: chmod 600 ${path}`);
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof LocalError) throw error;
    const code = errorCode(error);
    return fail(
      `cannot read tokens file ${path}${typeof code === 'string' ? ` (${code})` : ''}: check --tokens-file / A2AC_TOKENS_FILE`,
    );
  }
  return text.split('\n').flatMap((line, i) => {
    const entry = line.trim();
    return entry === '' || entry.startsWith('#') ? [] : [roleOfLine(entry, `tokens file line ${i + 1}`)];
  });
}
