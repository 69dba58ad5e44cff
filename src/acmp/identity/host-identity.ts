import { LocalError } from '../../shared/errors.js';
import { didKeyOf } from './did-key.js';
import type { DidDocument } from './did-document.js';
import { didWebOf } from './did-web.js';
import type { KeyInfo, KeyRing } from './key-ring.js';
import type { Signer } from './signer.js';

/**
 * The identity an ACMP party acts under (Layer 7 §2): its DID and a signer over its newest key. What
 * the provider core, escrow and buyer code are handed — never the keys themselves.
 */
export interface PartyIdentity {
  /**
   * The DID; read on each use, since a host's did:web is known only once it listens (`undefined`
   * before: nothing is advertised or signed under it).
   */
  readonly did: string | undefined;
  /**
   * A signer over the newest key.
   * @throws LocalError `NOT_FOUND` when no key is left; `INVALID_STATE` while the DID is not known.
   */
  signer(): Signer;
}

/** A host's `did:web` identity, which also publishes its DID document. */
export interface WebIdentity extends PartyIdentity {
  /** The DID document to serve at `/.well-known/did.json`: every current key, and the aliases. */
  document(): DidDocument;
}

/** The JSON-LD contexts of the document: DID Core v1 and the JsonWebKey2020 suite. */
const CONTEXT = ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/suites/jws-2020/v1'];

/**
 * The `did:web` identity of a host at `baseUrl()` (its public URL): one JsonWebKey2020 verification
 * method `<did>#<key id>` per key of the ring, each listed under `assertionMethod` and `authentication`;
 * `alsoKnownAs` carries the aliases (the ACMP `provider_id`, Layer 7 §2.2).
 */
export function createWebIdentity(options: {
  keys: KeyRing;
  baseUrl: () => string;
  alsoKnownAs?: readonly string[];
}): WebIdentity {
  const known = (): string | undefined => {
    const url = options.baseUrl();
    return URL.canParse(url) ? didWebOf(url) : undefined;
  };
  const did = (): string => {
    const value = known();
    if (value === undefined) throw new LocalError('INVALID_STATE', 'the host DID is known once it listens');
    return value;
  };
  const methodId = (key: KeyInfo): string => `${did()}#${key.id}`;
  return {
    get did() {
      return known();
    },
    signer: () => options.keys.signer((key) => ({ did: did(), verificationMethod: methodId(key) })),
    document: () => {
      const keys = options.keys.keys();
      const ids = keys.map(methodId);
      return {
        '@context': CONTEXT,
        id: did(),
        ...(options.alsoKnownAs?.length ? { alsoKnownAs: [...options.alsoKnownAs] } : {}),
        verificationMethod: keys.map((key) => ({
          id: methodId(key),
          type: 'JsonWebKey2020',
          controller: did(),
          publicKeyJwk: key.publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string },
        })),
        assertionMethod: ids,
        authentication: ids,
      };
    },
  };
}

/**
 * The `did:key` identity of the newest key of a ring (Layer 7 §2.1: the natural choice for buyers).
 * A did:key names one key, so rotating the key changes the DID.
 * @throws LocalError `NOT_FOUND` when the ring holds no key.
 */
export function createKeyIdentity(keys: KeyRing): PartyIdentity & { readonly did: string } {
  const newest = (): KeyInfo => {
    const key = keys.keys().at(-1);
    if (!key) throw new LocalError('NOT_FOUND', 'the identity key file holds no key (a2a-commerce keys new)');
    return key;
  };
  return {
    get did() {
      return didKeyOf(newest().publicKey).did;
    },
    signer: () => keys.signer((key) => didKeyOf(key.publicKey)),
  };
}

/** The identity of a fixed signer: its DID and that signer (a party whose key never rotates in process). */
export function identityOfSigner(signer: Signer): PartyIdentity {
  return { did: signer.did, signer: () => signer };
}

/**
 * A {@link Signer} that always signs with the identity's newest key: what it reports (DID, method, alg)
 * and the key that signs are read from `identity.signer()` at each use, so a key added to the ring signs
 * from then on and a retired one signs nothing more (docs/acmp-identity.md "Where keys live").
 */
export function currentSignerOf(identity: PartyIdentity): Signer {
  return {
    get did() {
      return identity.signer().did;
    },
    get verificationMethod() {
      return identity.signer().verificationMethod;
    },
    get alg() {
      return identity.signer().alg;
    },
    sign: (data, options) => identity.signer().sign(data, options),
  };
}
