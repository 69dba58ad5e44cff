import { LocalError } from '../../shared/errors.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import { createDidResolver } from '../identity/resolver.js';
import { verifyObject, type DidResolver } from '../identity/verify.js';
import type { CapabilityObject } from '../wire/messages.js';

/** How a buyer checks the Layer 7 §4 envelopes of a provider's offers and results. */
export interface SignaturePolicy {
  /**
   * The DID the provider must sign as (Layer 7 §3: the expected DID, never whichever DID signed).
   * Default: the `did` of the provider's capability object (§2.2).
   */
  readonly expectedDid?: string;
  /**
   * Refuse unsigned offers and results (default: on when a DID is expected). Off, an unsigned one passes
   * but a signed one is still verified.
   */
  readonly requireSignatures?: boolean;
  /** Resolves the provider's DID (default: `createDidResolver()`, did:web and did:key). */
  readonly resolver?: DidResolver;
}

/** The `did` a capability object advertises (Layer 7 §2.2), if it is a string that looks like one. */
function advertisedDid(capability: CapabilityObject): string | undefined {
  const did = 'did' in capability ? capability.did : undefined;
  return typeof did === 'string' && did.startsWith('did:') ? did : undefined;
}

/**
 * The buyer side of Layer 7 §4.1 for one provider: every offer and result it accepts is signed by the
 * expected DID over exactly the object received. Without an expected DID there is nothing to check
 * against, and nothing is checked (a Layer-4-only provider, §4.1 P5).
 */
export class SignatureCheck {
  readonly expectedDid: string | undefined;
  readonly required: boolean;
  private resolver: DidResolver | undefined;

  /**
   * @throws LocalError `CONFIG_INVALID` when signatures are required but no DID is known to check them by.
   */
  constructor(policy: SignaturePolicy, capability: CapabilityObject) {
    this.expectedDid = policy.expectedDid ?? advertisedDid(capability);
    this.required = policy.requireSignatures ?? this.expectedDid !== undefined;
    this.resolver = policy.resolver;
    if (this.required && this.expectedDid === undefined)
      throw new LocalError(
        'CONFIG_INVALID',
        'requireSignatures needs the provider DID: it advertises none, so give expectedDid',
      );
  }

  /**
   * Verifies the envelope of `object` as received (an offer, a result with its proof).
   * @throws AcmpError -36003 `signature_invalid` (unsigned while required: `data.reason` `unsigned`;
   *   tampered; signed by another DID), -36002 when the DID cannot be resolved.
   */
  async check(object: object, options: { signal?: AbortSignal } = {}): Promise<void> {
    const expectedDid = this.expectedDid;
    if (expectedDid === undefined) return;
    if (!('sig' in object) || object.sig === undefined) {
      if (this.required)
        throw new AcmpError(ACMP_CODE.signatureInvalid, { check: 'envelope', reason: 'unsigned' });
      return;
    }
    this.resolver ??= createDidResolver();
    await verifyObject(object, {
      resolver: this.resolver,
      expectedDid,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }
}
