import { AgentCard, canonicalizeAgentCard } from '@a2a-js/sdk';
import { decodeProtectedHeader, flattenedVerify } from 'jose';
import { ACMP_CODE, AcmpError } from '../acmp/wire/errors.js';
import { publicKeyOf, signingMethod, type DidResolver, type Signer } from '../acmp/identity/index.js';
import { canonicalJson } from '../shared/jcs.js';
import { isJsonObject } from '../shared/json.js';

/*
 * Agent card signatures (A2A v1.0 §8.4; docs/acmp-identity.md "Signed agent card"): a JWS in the
 * flattened form `{ protected, signature }` over the card canonicalised as §8.4.1 says — the SDK's
 * `canonicalizeAgentCard` (ProtoJSON with default values dropped, `signatures` excluded, RFC 8785).
 * The protected header is `{ alg, typ: "JOSE", kid }` with `kid` the DID URL of the host's verification
 * method; the key never leaves the {@link Signer}.
 */

const JOSE_TYPE = 'JOSE';

/** The §8.4.1 payload of a card: the SDK's canonical form, read from the card's ProtoJSON. */
function canonicalPayload(cardJson: unknown): string {
  return canonicalizeAgentCard(cardJson as AgentCard);
}

/**
 * The card with one signature by `signer` in `signatures` (replacing any it had): A2A §8.4.2, JWS
 * signing input `b64url(protected) '.' b64url(payload)` signed by the Signer, whose EdDSA and ES256
 * output is already the JOSE form.
 */
export async function signAgentCard(
  card: AgentCard,
  signer: Signer,
  options: { signal?: AbortSignal } = {},
): Promise<AgentCard> {
  const header = { alg: signer.alg, typ: JOSE_TYPE, kid: signer.verificationMethod };
  const protectedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
  const payload = Buffer.from(canonicalPayload(AgentCard.toJSON({ ...card, signatures: [] })), 'utf8');
  const input = `${protectedHeader}.${payload.toString('base64url')}`;
  const signature = await signer.sign(Buffer.from(input, 'ascii'), options);
  return {
    ...card,
    signatures: [
      {
        protected: protectedHeader,
        signature: Buffer.from(signature).toString('base64url'),
        header: undefined,
      },
    ],
  };
}

/** Options of {@link verifyAgentCard}. */
export interface CardVerifyOptions {
  readonly resolver: DidResolver;
  /** The DID that must have signed (the agent's did:web, or one known from elsewhere). */
  readonly expectedDid: string;
  /** Refuse a card without signatures (default: an unsigned card passes, a signed one must verify). */
  readonly requireSigned?: boolean;
  readonly signal?: AbortSignal;
}

function refused(reason: string): AcmpError {
  return new AcmpError(ACMP_CODE.signatureInvalid, { check: 'agent_card', reason });
}

/**
 * The payload a received card's signatures cover: a v1.0 card by §8.4.1; a v0.3 card (it has the
 * top-level `protocolVersion` v0.3 requires and v1.0 dropped) by the v0.3 rule, RFC 8785 of the card as
 * received without `signatures`.
 */
function receivedPayload(cardJson: Record<string, unknown>): string {
  if (typeof cardJson.protocolVersion !== 'string') return canonicalPayload(cardJson);
  const { signatures: _signatures, ...rest } = cardJson;
  return canonicalJson(rest);
}

/** Outcomes that say nothing about the card: a key of another DID, or a DID that cannot be resolved. */
const UNCHECKABLE: readonly string[] = ['did', 'did_unresolvable'];

/**
 * Verifies the signatures of a card as received (its JSON, before any normalising). A signature counts
 * when its `kid` is a key of `expectedDid` listed under `assertionMethod` or `authentication` in the
 * document the resolver returns, and it verifies over the card's canonical form. With `requireSigned`
 * one must count. Without it, a card whose signatures cannot be checked (none, another DID's, a DID
 * that does not resolve) passes as unsigned — stripping them would have the same effect — but a card
 * whose checkable signature fails is refused: it was changed after signing.
 * @returns whether a signature verified.
 * @throws AcmpError -36003 `signature_invalid` (`data.check: "agent_card"`, `data.reason`).
 */
export async function verifyAgentCard(cardJson: unknown, options: CardVerifyOptions): Promise<boolean> {
  if (!isJsonObject(cardJson)) throw refused('not_a_card');
  const signatures = Array.isArray(cardJson.signatures) ? cardJson.signatures : [];
  if (signatures.length === 0) {
    if (options.requireSigned === true) throw refused('unsigned');
    return false;
  }
  const payload = Buffer.from(receivedPayload(cardJson), 'utf8').toString('base64url');
  const outcomes: string[] = [];
  for (const entry of signatures) {
    const outcome = await verifyOne(entry, payload, options);
    if (outcome === 'ok') return true;
    outcomes.push(outcome);
  }
  const checked = outcomes.find((o) => !UNCHECKABLE.includes(o));
  if (checked !== undefined) throw refused(checked);
  if (options.requireSigned === true) throw refused(outcomes[0] ?? 'unsigned');
  return false;
}

/** One signature entry: `ok`, or why it does not count. */
async function verifyOne(entry: unknown, payload: string, options: CardVerifyOptions): Promise<string> {
  if (!isJsonObject(entry) || typeof entry.protected !== 'string' || typeof entry.signature !== 'string')
    return 'malformed';
  let kid: unknown;
  let alg: unknown;
  try {
    ({ kid, alg } = decodeProtectedHeader({ protected: entry.protected }));
  } catch {
    return 'malformed';
  }
  if (alg !== 'EdDSA' && alg !== 'ES256') return 'alg';
  if (typeof kid !== 'string' || !kid.startsWith(`${options.expectedDid}#`)) return 'did';
  let method: ReturnType<typeof signingMethod>;
  try {
    method = signingMethod(await options.resolver.resolve(options.expectedDid, options), kid);
  } catch {
    return 'did_unresolvable';
  }
  const key = method ? publicKeyOf(method) : undefined;
  if (!key) return 'key';
  try {
    await flattenedVerify({ payload, protected: entry.protected, signature: entry.signature }, key, {
      algorithms: [alg],
    });
    return 'ok';
  } catch {
    return 'signature';
  }
}
