import { z } from 'zod';

/*
 * The parts of a W3C DID document (DID Core §5) that signature verification reads, as a schema applied
 * to every document a resolver returns (a peer's document is input like any other).
 */

/** A public JWK (RFC 7517) as DID documents carry it. */
const PublicJwkSchema = z.looseObject({
  kty: z.string(),
  crv: z.string().optional(),
  x: z.string().optional(),
  y: z.string().optional(),
});

/** A verification method (DID Core §5.2). */
export const VerificationMethodSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  controller: z.string().min(1),
  publicKeyJwk: PublicJwkSchema.optional(),
  publicKeyMultibase: z.string().optional(),
  publicKeyBase58: z.string().optional(),
});
export type VerificationMethod = z.infer<typeof VerificationMethodSchema>;

/** A verification relationship entry: a reference (DID URL, possibly relative) or an embedded method. */
const RelationshipSchema = z.array(z.union([z.string().min(1), VerificationMethodSchema]));

/** A DID document (DID Core §5), loose: members we do not read pass through. */
export const DidDocumentSchema = z.looseObject({
  id: z.string().min(1),
  alsoKnownAs: z.array(z.string()).optional(),
  verificationMethod: z.array(VerificationMethodSchema).optional(),
  authentication: RelationshipSchema.optional(),
  assertionMethod: RelationshipSchema.optional(),
});
export type DidDocument = z.infer<typeof DidDocumentSchema>;

/** The relationships under which a key may sign ACMP objects (docs/acmp-identity.md "Which keys sign"). */
const SIGNING_RELATIONSHIPS = ['assertionMethod', 'authentication'] as const;

/** A DID URL made absolute against the document's DID (`#key-1` → `did:web:example.com#key-1`). */
function absolute(doc: DidDocument, ref: string): string {
  return ref.startsWith('#') ? doc.id + ref : ref;
}

/**
 * The verification method `id` of `doc` that may sign: listed (by reference or embedded) under
 * `assertionMethod` or `authentication`, and controlled by the document's DID. A method present only in
 * `verificationMethod`, or only under another relationship (`keyAgreement`), is not one.
 */
export function signingMethod(doc: DidDocument, id: string): VerificationMethod | undefined {
  const declared = new Map((doc.verificationMethod ?? []).map((m) => [absolute(doc, m.id), m]));
  for (const relationship of SIGNING_RELATIONSHIPS) {
    for (const entry of doc[relationship] ?? []) {
      const method = typeof entry === 'string' ? declared.get(absolute(doc, entry)) : entry;
      const entryId = typeof entry === 'string' ? absolute(doc, entry) : absolute(doc, entry.id);
      if (method && entryId === id && method.controller === doc.id) return method;
    }
  }
  return undefined;
}
