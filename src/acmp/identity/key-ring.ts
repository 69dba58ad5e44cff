import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  type KeyObject,
} from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { systemClock, type Clock } from '../../shared/clock.js';
import { LocalError } from '../../shared/errors.js';
import { createKeySigner, type Signer } from './signer.js';

/*
 * The operator's identity keys (Layer 7 §1 "Keys", §2.3 custody): one JSON file, mode 0600, holding
 * every current key as a private JWK with its id (`key-1`, `key-2`, … — the fragment of its DID
 * verification method). The newest key signs; all of them verify until retired (docs/acmp-identity.md
 * "Where keys live").
 */

const FORMAT = 'a2a-commerce/identity-keys/v1';
const KEY_ID = /^key-(\d{1,6})$/;

const KeyFileSchema = z.object({
  format: z.literal(FORMAT),
  keys: z.array(
    z.object({
      id: z.string().regex(KEY_ID),
      created_ms: z.int().nonnegative(),
      private_jwk: z.looseObject({ kty: z.string(), crv: z.string(), d: z.string(), x: z.string() }),
    }),
  ),
});
type KeyFile = z.infer<typeof KeyFileSchema>;

/** What may be shown of one key: never its private part. */
export interface KeyInfo {
  readonly id: string;
  readonly createdMs: number;
  readonly publicKey: KeyObject;
}

/** The keys of one file, re-read when the file changes (a `keys new` or `keys retire` while running). */
export interface KeyRing {
  /** The current keys, oldest first. */
  keys(): readonly KeyInfo[];
  /**
   * A signer over the newest key, naming the verification method `identity(key)` gives it.
   * @throws LocalError `NOT_FOUND` when the file holds no key.
   */
  signer(identity: (key: KeyInfo) => { did: string; verificationMethod: string }): Signer;
}

/**
 * The key ring of `path` (an absent file is an empty ring).
 * @throws LocalError `CONFIG_INVALID` when the file is readable by group or others, or is not a key file.
 */
export function openKeyRing(path: string): KeyRing {
  return new FileKeyRing(path);
}

class FileKeyRing implements KeyRing {
  private loaded: { stamp: string; keys: { info: KeyInfo; privateKey: KeyObject }[] } | undefined;

  constructor(private readonly path: string) {}

  keys(): readonly KeyInfo[] {
    return this.current().map((k) => k.info);
  }

  signer(identity: (key: KeyInfo) => { did: string; verificationMethod: string }): Signer {
    const newest = this.current().at(-1);
    if (!newest)
      throw new LocalError('NOT_FOUND', 'the identity key file holds no key (a2a-commerce keys new)');
    return createKeySigner(identity(newest.info), newest.privateKey);
  }

  private current(): { info: KeyInfo; privateKey: KeyObject }[] {
    const stamp = fileStamp(this.path);
    if (this.loaded !== undefined && this.loaded.stamp === (stamp ?? '')) return this.loaded.keys;
    const file = stamp === undefined ? emptyFile() : readKeyFile(this.path);
    const keys = file.keys.map(decodeKey);
    this.loaded = { stamp: stamp ?? '', keys };
    return keys;
  }
}

function decodeKey(entry: KeyFile['keys'][number]): { info: KeyInfo; privateKey: KeyObject } {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: entry.private_jwk, format: 'jwk' });
  } catch (cause) {
    throw new LocalError('CONFIG_INVALID', `identity key ${entry.id} is not a usable private key`, { cause });
  }
  return {
    info: { id: entry.id, createdMs: entry.created_ms, publicKey: createPublicKey(privateKey) },
    privateKey,
  };
}

/** Identifies a version of the file (inode, size, mtime), or `undefined` when there is none. */
function fileStamp(path: string): string | undefined {
  try {
    const s = statSync(path, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return undefined;
  }
}

function emptyFile(): KeyFile {
  return { format: FORMAT, keys: [] };
}

function readKeyFile(path: string): KeyFile {
  const mode = statSync(path).mode;
  if ((mode & 0o077) !== 0)
    throw new LocalError('CONFIG_INVALID', `identity key file ${path} is readable by others: chmod 600 it`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new LocalError('CONFIG_INVALID', `identity key file ${path} is not JSON`);
  }
  const file = KeyFileSchema.safeParse(parsed);
  if (!file.success) throw new LocalError('CONFIG_INVALID', `identity key file ${path} is not a key file`);
  return file.data;
}

function readOrEmpty(path: string): KeyFile {
  return fileStamp(path) === undefined ? emptyFile() : readKeyFile(path);
}

/** Writes the file whole: a new 0600 file beside it, then a rename, so no reader sees half a file. */
function writeKeyFile(path: string, file: KeyFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomUUID()}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(file, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
}

/**
 * Adds a new Ed25519 key (`key-<n+1>`) to the file, creating it (0600, its folder 0700) if needed.
 * The new key signs from now on; the older ones keep verifying until retired.
 * @returns the new key's public information.
 * @throws LocalError `CONFIG_INVALID` as {@link openKeyRing}.
 */
export function addKey(path: string, options: { clock?: Clock } = {}): KeyInfo {
  const file = readOrEmpty(path);
  const next = Math.max(0, ...file.keys.map((k) => Number(KEY_ID.exec(k.id)?.[1] ?? 0))) + 1;
  const { privateKey } = generateKeyPairSync('ed25519');
  const jwk = privateKey.export({ format: 'jwk' });
  const entry = {
    id: `key-${next}`,
    created_ms: (options.clock ?? systemClock).now(),
    private_jwk: { kty: 'OKP', crv: 'Ed25519', d: jwk.d ?? '', x: jwk.x ?? '' },
  };
  writeKeyFile(path, { ...file, keys: [...file.keys, entry] });
  return decodeKey(entry).info;
}

/**
 * Removes key `id` from the file: it no longer signs, and verifiers stop accepting it once their cached
 * DID document expires (docs/acmp-identity.md "Revocation latency").
 * @throws LocalError `NOT_FOUND` for a key the file does not hold; `CONFIG_INVALID` as {@link openKeyRing}.
 */
export function retireKey(path: string, id: string): void {
  const file = readOrEmpty(path);
  if (!file.keys.some((k) => k.id === id)) throw new LocalError('NOT_FOUND', `no identity key "${id}"`);
  writeKeyFile(path, { ...file, keys: file.keys.filter((k) => k.id !== id) });
}
