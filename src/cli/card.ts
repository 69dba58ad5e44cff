import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fetchAgentCard } from '../a2a/client.js';
import { describeCard, type ExtensionParamsCheck } from '../a2a/card-summary.js';
import { ACMP_EXTENSION_URI } from '../acmp/wire/constants.js';
import { CapabilityObjectSchema } from '../acmp/wire/messages.js';
import { ACP_EXTENSION_URI, ACP_KINDS } from '../acpspec/constants.js';
import { selfSignedPaths } from '../server/tls.js';
import { errorCode, LocalError } from '../shared/errors.js';
import { UsageError, type CliIo } from './io.js';

export const CARD_USAGE = `Usage: a2a-commerce card <agent-url> [--data-dir <dir>] [--ca <pem>] [--json]

Fetches the agent card from <agent-url>/.well-known/agent-card.json with the SDK's resolver, checks it
and prints its interfaces, security and extensions. --data-dir trusts that directory's self-signed
localhost certificate; --ca trusts a CA file; --json prints the parsed card.`;

/** Trusted CA for a client verb: --ca file, or the data directory's self-signed certificate. */
export function caFromFlags(
  values: { ca?: string; 'data-dir'?: string },
  env: Record<string, string | undefined>,
): string | undefined {
  if (values.ca) {
    try {
      return readFileSync(values.ca, 'utf8');
    } catch (cause) {
      const code = errorCode(cause);
      throw new LocalError(
        'CONFIG_INVALID',
        `cannot read --ca ${values.ca} (${String(code ?? cause)}): give the path of a PEM certificate`,
        { cause },
      );
    }
  }
  const dataDir = values['data-dir'] ?? env.A2AC_DATA_DIR;
  if (!dataDir) return undefined;
  try {
    return readFileSync(selfSignedPaths(dataDir).cert, 'utf8');
  } catch {
    return undefined;
  }
}

/** Environment fallback for `--token`, so a client's token need not appear in shell history or `ps`. */
export const TOKEN_ENV = 'A2AC_TOKEN';

/** Bearer token for a client verb: --token, else `A2AC_TOKEN` from the environment. */
export function tokenFromFlags(
  values: { token?: string },
  env: Record<string, string | undefined>,
): string | undefined {
  return values.token ?? (env[TOKEN_ENV] || undefined);
}

/** Checks of the extensions this package knows: their params must be what the bindings define. */
const EXTENSION_CHECKS: Record<string, ExtensionParamsCheck> = {
  [ACMP_EXTENSION_URI]: (params) => {
    const parsed = CapabilityObjectSchema.safeParse(params);
    return parsed.success ? [] : parsed.error.issues.map((i) => `params.${i.path.join('.')}: ${i.message}`);
  },
  [ACP_EXTENSION_URI]: (params) => {
    const problems: string[] = [];
    if (typeof params?.acp_version !== 'string') problems.push('params.acp_version is missing');
    if (typeof params?.schema_url !== 'string' || !/^https?:\/\//.test(params.schema_url))
      problems.push('params.schema_url is not an absolute URL');
    for (const key of ['accepts', 'emits']) {
      const value = params?.[key];
      const ok =
        Array.isArray(value) && value.length > 0 && value.every((k) => ACP_KINDS.some((kind) => kind === k));
      if (!ok) problems.push(`params.${key} must be a non-empty list of snapshot/delta`);
    }
    return problems;
  },
};

/** `a2a-commerce card <url>`. */
export async function card(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { 'data-dir': { type: 'string' }, ca: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
  });
  const [url, extra] = positionals;
  if (!url || extra !== undefined) throw new UsageError('card takes exactly one <agent-url>');
  if (!/^https?:\/\//.test(url)) throw new UsageError(`"${url}" is not an http(s) URL`);
  const agentCard = await fetchAgentCard(url, { caCert: caFromFlags(values, io.env) });
  const summary = describeCard(agentCard, EXTENSION_CHECKS);
  if (values.json) io.out(JSON.stringify(summary.json, null, 2));
  else io.out(summary.text);
  for (const problem of summary.problems) io.err(`warning: ${problem}`);
  return summary.problems.length > 0 ? 1 : 0;
}
