import { randomBytes } from 'node:crypto';
import type { AcceptOutcome, Agreement, AgreementStore } from '../../acmp/negotiation/agreement-store.js';

/** An in-process {@link AgreementStore} (the provider's default); its offer key lives as long as the process. */
export class MemoryAgreementStore implements AgreementStore {
  private readonly key = randomBytes(32);
  private readonly agreements = new Map<string, Agreement>();
  private readonly escrows = new Map<string, string>();

  offerKey(): Promise<Buffer> {
    return Promise.resolve(this.key);
  }

  accept(agreement: Agreement): Promise<AcceptOutcome> {
    const existing = this.agreements.get(agreement.offerKey);
    if (existing) return Promise.resolve({ kind: 'exists', existing });
    if (agreement.escrowId !== null && this.escrows.has(agreement.escrowId))
      return Promise.resolve({ kind: 'escrow_committed' });
    this.agreements.set(agreement.offerKey, agreement);
    if (agreement.escrowId !== null) this.escrows.set(agreement.escrowId, agreement.offerKey);
    return Promise.resolve({ kind: 'accepted' });
  }

  get(offerKey: string): Promise<Agreement | undefined> {
    return Promise.resolve(this.agreements.get(offerKey));
  }

  byEscrow(escrowId: string): Promise<Agreement | undefined> {
    const key = this.escrows.get(escrowId);
    return Promise.resolve(key === undefined ? undefined : this.agreements.get(key));
  }

  consume(offerKey: string, taskId: string): Promise<boolean> {
    const agreement = this.agreements.get(offerKey);
    if (!agreement) return Promise.resolve(false);
    if (agreement.consumedBy !== null) return Promise.resolve(agreement.consumedBy === taskId);
    this.agreements.set(offerKey, { ...agreement, consumedBy: taskId });
    return Promise.resolve(true);
  }

  unconsume(offerKey: string, taskId: string): Promise<void> {
    const agreement = this.agreements.get(offerKey);
    if (agreement?.consumedBy === taskId) this.agreements.set(offerKey, { ...agreement, consumedBy: null });
    return Promise.resolve();
  }
}
