import { parseArgs } from 'node:util';
import { didKeyOf } from '../acmp/identity/did-key.js';
import { didWebOf } from '../acmp/identity/did-web.js';
import { addKey, openKeyRing, retireKey, type KeyInfo } from '../acmp/identity/key-ring.js';
import { resolveIdentityKey } from '../server/config.js';
import { UsageError, type CliIo } from './io.js';

export const KEYS_USAGE = `Usage: a2a-commerce keys <new | list | retire <key-id>> [--identity-key <file>] [--data-dir <dir>] [--public-url <url>]

Manages the Layer 7 identity keys of a host or a buyer (docs/acmp-identity.md): Ed25519 keys in one
file, mode 0600 (--identity-key or A2AC_IDENTITY_KEY; default <data dir>/identity/keys.json).
  new            adds a key (key-1, key-2, …); the newest signs, the others keep verifying
  list           shows each key's id, creation time and public did:key (never a private key)
  retire <id>    removes a key: it stops signing at once and stops verifying once verifiers'
                 cached DID documents expire
With --public-url (or A2AC_PUBLIC_URL) the host's did:web and its verification methods are shown too.`;

/** `a2a-commerce keys`: provisions, lists and retires identity keys; prints public material only. */
export function keys(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'identity-key': { type: 'string' },
      'data-dir': { type: 'string' },
      'public-url': { type: 'string' },
    },
    allowPositionals: true,
  });
  const [action, ...rest] = positionals;
  const path = resolveIdentityKey(values, io.env);
  const publicUrl = values['public-url'] ?? (io.env.A2AC_PUBLIC_URL || undefined);
  const describe = (key: KeyInfo): string => describeKey(key, publicUrl);
  switch (action ?? '') {
    case 'new': {
      noMore(rest);
      io.out(`added ${describe(addKey(path))} to ${path}`);
      return Promise.resolve(0);
    }
    case 'list': {
      noMore(rest);
      const held = openKeyRing(path).keys();
      if (held.length === 0) io.out(`no identity keys in ${path} (a2a-commerce keys new)`);
      for (const key of held) io.out(describe(key));
      if (publicUrl !== undefined && held.length > 0) io.out(`did:web ${didWebOf(publicUrl)}`);
      return Promise.resolve(0);
    }
    case 'retire': {
      const [id, ...extra] = rest;
      if (id === undefined) throw new UsageError('retire needs the id of a key (see keys list)');
      noMore(extra);
      retireKey(path, id);
      io.out(`retired ${id} from ${path}`);
      return Promise.resolve(0);
    }
    default:
      throw new UsageError(
        action === undefined ? 'name an action: new, list or retire' : `unknown action "${action}"`,
      );
  }
}

function noMore(rest: string[]): void {
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
}

function describeKey(key: KeyInfo, publicUrl: string | undefined): string {
  const created = new Date(key.createdMs).toISOString();
  const web = publicUrl === undefined ? '' : `  ${didWebOf(publicUrl)}#${key.id}`;
  return `${key.id}  Ed25519  created ${created}  ${didKeyOf(key.publicKey).did}${web}`;
}
