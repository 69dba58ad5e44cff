import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isLocalError } from '../../shared/errors.js';
import { buildCapabilityObject } from '../wire/capability-object.js';
import { AcmpError } from '../wire/errors.js';
import { didKeyOf } from '../identity/did-key.js';
import { createKeySigner } from '../identity/signer.js';
import { SignatureCheck } from './signature-policy.js';
import { withSignature } from '../identity/signed.js';

const plain = buildCapabilityObject(true, null);

function identity() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const id = didKeyOf(publicKey);
  return { did: id.did, signer: createKeySigner(id, privateKey) };
}

async function checkError(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a refusal');
}

describe('SignatureCheck (Layer 7 §3, §4.1, buyer side)', () => {
  it('expects the DID the capability object advertises and requires signatures then', async () => {
    const { did, signer } = identity();
    const check = new SignatureCheck({}, { ...plain, did });
    expect(check).toMatchObject({ expectedDid: did, required: true });
    await check.check(await withSignature({ offer_id: 'o', price_cu: 1 }, signer));
    const unsigned = await checkError(check.check({ offer_id: 'o', price_cu: 1 }));
    expect(unsigned).toBeInstanceOf(AcmpError);
    expect(unsigned).toMatchObject({ code: -36003, data: { reason: 'unsigned' } });
  });

  it('checks nothing without a DID, and refuses to require signatures it cannot check', async () => {
    await new SignatureCheck({}, plain).check({ anything: true });
    let thrown: unknown;
    try {
      new SignatureCheck({ requireSignatures: true }, plain);
    } catch (error) {
      thrown = error;
    }
    expect(isLocalError(thrown, 'CONFIG_INVALID')).toBe(true);
  });

  it('an explicit expectedDid wins over the advertised one (another signer is refused)', async () => {
    const advertised = identity();
    const expected = identity();
    const check = new SignatureCheck(
      { expectedDid: expected.did },
      {
        ...plain,
        did: advertised.did,
      },
    );
    const refused = await checkError(check.check(await withSignature({ a: 1 }, advertised.signer)));
    expect(refused).toMatchObject({ code: -36003, data: { check: 'did' } });
  });
});
