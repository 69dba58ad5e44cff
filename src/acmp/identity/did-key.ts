import type { KeyObject } from 'node:crypto';
import { multikeyOf } from './public-key.js';

/**
 * The `did:key` of a public key (the did:key method: `did:key:` + the multibase base58btc multicodec
 * key, Ed25519 `z6Mk…` or P-256 `zDn…`) and its one verification method, `<did>#<multibase>`.
 * Resolution is `key-did-resolver`'s (src/acmp/identity/resolver.ts).
 */
export function didKeyOf(publicKey: KeyObject): { did: string; verificationMethod: string } {
  const multibase = multikeyOf(publicKey);
  const did = `did:key:${multibase}`;
  return { did, verificationMethod: `${did}#${multibase}` };
}
