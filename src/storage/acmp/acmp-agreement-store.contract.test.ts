import fc from 'fast-check';
import { expect, it } from 'vitest';
import { storeContract, type StoreBackends } from '../../../test/helpers/store-harness.js';
import type { AgreementStore } from '../../acmp/negotiation/agreement-store.js';
import { MemoryAgreementStore } from '../memory/acmp-agreement-store-memory.js';
import { Negotiator } from '../../acmp/negotiation/negotiator.js';
import { AcmpError } from '../../acmp/wire/errors.js';
import type { AcmpCapability } from '../../acmp/provider/provider-types.js';
import { KyselyAgreementStore } from './acmp-agreement-store-kysely.js';
import { acmpMigrations } from './acmp-migrations.js';

const backends: StoreBackends<AgreementStore> = {
  memory: () => new MemoryAgreementStore(),
  kysely: (database) => new KyselyAgreementStore(database),
  migrations: [acmpMigrations],
};

const capability: AcmpCapability = {
  id: 'count-runs',
  price: 0.001,
  handler: () => Promise.resolve({ type: 'text', data: 'ok' }),
};
const clock = { now: () => 1_000_000 };
const negotiatorOf = (store: AgreementStore): Negotiator =>
  new Negotiator({ store, clock }, new Map([[capability.id, capability]]));

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * One edit of an offer id that a lenient base64url decoder may read as the same bytes: padding,
 * whitespace, a foreign character, a case change, or another alphabet character (which the decoder
 * aliases when it lands in the unused low bits of the last character).
 */
const edit = fc.record({
  at: fc.nat(),
  kind: fc.constantFrom('insert', 'case', 'replace'),
  text: fc.oneof(
    fc.constantFrom('=', '==', ' ', '\t', '\n', '\r\n', '*', '!', '+', '/', '~', 'é', '\u00a0', '\u0000'),
    fc.constantFrom(...BASE64URL.split('')),
  ),
});

function apply(offerId: string, e: { at: number; kind: string; text: string }): string {
  const start = 'offer_'.length;
  const at = start + (e.at % (offerId.length - start + 1));
  const [head, tail] = [offerId.slice(0, at), offerId.slice(at)];
  switch (e.kind) {
    case 'insert':
      return head + e.text + tail;
    case 'case': {
      const c = tail.charAt(0);
      return head + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + tail.slice(1);
    }
    default:
      return head + e.text.charAt(0) + tail.slice(1);
  }
}

let run = 0;

storeContract('AgreementStore contract', backends, (t) => {
  it('every spelling of one offer yields at most one agreement (L6 §2.2 single-use, -34001 for re-spellings)', async () => {
    const negotiator = negotiatorOf(t.store);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(edit, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        async (edits, canonicalAt) => {
          const n = ++run;
          // A buyer per run, so every run quotes a new offer.
          const scope = { tenant: '', agent: `agent:run-${n}` };
          const offer = await negotiator.quote({ capability: capability.id }, scope);
          const spellings = edits.map((list) => list.reduce(apply, offer.offer_id));
          spellings.splice(canonicalAt % (spellings.length + 1), 0, offer.offer_id);
          const escrows = spellings.map((_, i) => `esc_${n}_${i}`);
          for (const [i, spelling] of spellings.entries()) {
            const outcome = await negotiator
              .accept({ offer_id: spelling, escrow_id: escrows[i] }, scope)
              .then(
                () => 'accepted',
                (error: unknown) => (error instanceof AcmpError ? error.code : error),
              );
            if (spelling !== offer.offer_id) expect(outcome).toBe(-34001);
            else expect(['accepted', -34003]).toContain(outcome);
          }
          const agreements = await Promise.all(escrows.map((e) => t.store.byEscrow(e)));
          const found = agreements.filter((a) => a !== undefined);
          expect(found).toHaveLength(1);
          expect(found[0]?.offerId).toBe(offer.offer_id);
        },
      ),
      { numRuns: t.backend === 'memory' ? 200 : 40 },
    );
  });

  it('an accepted agreement is read back by its offer key and its escrow, consumed once', async () => {
    const negotiator = negotiatorOf(t.store);
    const scope = { tenant: '', agent: 'agent:a' };
    const offer = await negotiator.quote({ capability: capability.id }, scope);
    await negotiator.accept({ offer_id: offer.offer_id, escrow_id: 'esc_read' }, scope);
    const agreement = await negotiator.agreementOf(offer.offer_id);
    expect(agreement).toMatchObject({ offerId: offer.offer_id, escrowId: 'esc_read', scope });
    expect(await t.store.byEscrow('esc_read')).toEqual(agreement);
    expect(await t.store.consume(agreement!.offerKey, 'task-1')).toBe(true);
    expect(await t.store.consume(agreement!.offerKey, 'task-2')).toBe(false);
  });
});
