import { parseArgs } from 'node:util';
import { createAcmpBuyer } from '../a2a/acmp/buyer.js';
import { acmpErrorSpec, isAcmpError } from '../acmp/wire/errors.js';
import { createDidResolver } from '../acmp/identity/resolver.js';
import { fetchTrusting } from '../shared/fetch.js';
import { caFromFlags, tokenFromFlags } from './card.js';
import { UsageError, type CliIo } from './io.js';

export const IDENTITY_USAGE = `  a2a-commerce acmp identity <agent-url> [--did <did>] [--token <t>] [--data-dir <dir> | --ca <pem>]`;

/**
 * `a2a-commerce acmp identity <agent-url>`: challenges the provider with `acmp/proveIdentity` (Layer 7
 * §3) over A2A and checks the answer against `--did` or the DID its card advertises, resolving the DID
 * (did:web over HTTPS, trusting the same CA as the call; did:key offline). Exit 1 with the -36xxx code and
 * the failed check otherwise.
 */
export async function identity(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      did: { type: 'string' },
      token: { type: 'string' },
      'data-dir': { type: 'string' },
      ca: { type: 'string' },
    },
    allowPositionals: true,
  });
  const [url, extra] = positionals;
  if (url === undefined || extra !== undefined) throw new UsageError('expected exactly one <agent-url>');
  const caCert = caFromFlags(values, io.env);
  const buyer = await createAcmpBuyer({ agentUrl: url, token: tokenFromFlags(values, io.env), caCert });
  try {
    const verified = await buyer.proveIdentity({
      resolver: createDidResolver({ fetch: fetchTrusting(caCert) }),
      ...(values.did !== undefined ? { expectedDid: values.did } : {}),
    });
    io.out(`verified ${verified.did} (${verified.verificationMethod}, ${verified.alg})`);
    return 0;
  } catch (error) {
    if (!isAcmpError(error)) throw error;
    const detail = JSON.stringify(error.data ?? {});
    io.err(`error ${error.code} ${acmpErrorSpec(error.code)?.name ?? ''}: ${error.message} ${detail}`);
    return 1;
  }
}
