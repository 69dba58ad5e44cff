import { LocalError } from '../shared/errors.js';
import { parseBearerToken, type BearerToken } from '../shared/identity.js';

/** The role word that marks a tokens-file line as an operator credential (`operator name=secret`). */
const OPERATOR_ROLE = 'operator';

/** One tokens-file entry with its role: a caller token, or an operator credential for `/console`. */
export interface RoledEntry {
  readonly entry: string;
  readonly where: string;
  readonly role: 'caller' | 'operator';
}

/**
 * The role of one tokens-file line: `operator <entry>` is an operator credential (docs/console.md "Auth"),
 * anything else a caller token. The role word and one space are removed from an operator entry.
 */
export function roleOfLine(entry: string, where: string): RoledEntry {
  const match = new RegExp(`^${OPERATOR_ROLE}\\s+(\\S.*)$`).exec(entry);
  return match?.[1] === undefined
    ? { entry, where, role: 'caller' }
    : { entry: match[1].trim(), where, role: 'operator' };
}

/**
 * The operator credentials: `--operator-token`/`A2AC_OPERATOR_TOKEN` entries and the `operator` lines of the
 * tokens file, each `name=secret` or a bare secret (identity `agent:<name>` / `token:<digest>`). An
 * operator secret must differ from every caller secret: the console credential is never a caller token.
 * @throws LocalError `CONFIG_INVALID` naming the entry's source (never the secret).
 */
export function resolveOperatorTokens(
  entries: readonly { entry: string; where: string }[],
  callers: readonly BearerToken[],
): BearerToken[] {
  const callerSecrets = new Set(callers.map((t) => t.secret));
  const seen = new Set<string>();
  return entries.map(({ entry, where }) => {
    const parsed = parseBearerToken(entry);
    if ('refused' in parsed) throw new LocalError('CONFIG_INVALID', `${where}: ${parsed.refused}`);
    if (callerSecrets.has(parsed.secret))
      throw new LocalError(
        'CONFIG_INVALID',
        `${where}: an operator token must not also be a caller token (choose another secret)`,
      );
    if (seen.has(parsed.secret))
      throw new LocalError('CONFIG_INVALID', 'the same operator secret is listed more than once');
    seen.add(parsed.secret);
    return parsed;
  });
}
