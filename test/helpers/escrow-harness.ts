import { expect } from 'vitest';
import {
  createEscrowAgent,
  type EscrowAgent,
  type EscrowAnswer,
  type EscrowCaller,
} from '../../src/acmp/escrow/agent.js';
import { NANO_PER_CU } from '../../src/acmp/escrow/amounts.js';
import { ESCROW_METHOD, type EscrowMethod, type EscrowSettings } from '../../src/acmp/escrow/constants.js';
import type { EscrowStore } from '../../src/acmp/escrow/store.js';
import type { JsonValue } from '../../src/shared/json.js';
import type { StoreUnderTest } from './store-harness.js';

/** Settings with short windows, so tests move the clock by seconds. */
const TEST_SETTINGS: EscrowSettings = {
  defaultChallengeWindowMs: 60_000,
  minChallengeWindowMs: 1_000,
  maxChallengeWindowMs: 3_600_000,
  disputeDeadlineMs: 120_000,
  defaultOutcome: 'refund_buyer',
};

const T0 = 1_800_000_000_000;
export const BUYER: EscrowCaller = { tenant: '', party: 'agent:buyer' };
export const PAYEE: EscrowCaller = { tenant: '', party: 'agent:provider' };
export const STRANGER: EscrowCaller = { tenant: '', party: 'agent:mallory' };

/** CU → nano-CU for expectations. */
export const nano = (cu: string): bigint => {
  const [whole, fraction = ''] = cu.split('.');
  return BigInt(whole!) * NANO_PER_CU + BigInt(fraction.padEnd(9, '0'));
};

/** A manual clock. */
export class ManualClock {
  constructor(public t = T0) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** An agent over a store with a manual clock, plus helpers that read like the scenarios of the design. */
export class EscrowHarness {
  readonly clock: ManualClock;
  readonly agent: EscrowAgent;
  private ops = 0;

  constructor(
    readonly store: EscrowStore,
    clock = new ManualClock(),
  ) {
    this.clock = clock;
    this.agent = createEscrowAgent({ store, clock, settings: TEST_SETTINGS });
  }

  call(caller: EscrowCaller, method: EscrowMethod, params: Record<string, JsonValue>): Promise<EscrowAnswer> {
    return this.agent.handle(caller, method, params);
  }

  /** A call that must succeed; returns its result. */
  async ok(
    caller: EscrowCaller,
    method: EscrowMethod,
    params: Record<string, JsonValue>,
  ): Promise<Record<string, JsonValue>> {
    const answer = await this.call(caller, method, params);
    if (answer.kind !== 'result') throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    return answer.result;
  }

  /** A call that must fail; returns its error object. */
  async fails(
    caller: EscrowCaller,
    method: EscrowMethod,
    params: Record<string, JsonValue>,
  ): Promise<{ code: number; data?: unknown }> {
    const answer = await this.call(caller, method, params);
    if (answer.kind !== 'error') throw new Error(`${method} succeeded: ${JSON.stringify(answer.result)}`);
    return answer.error;
  }

  opRef(): string {
    return `op-${++this.ops}`;
  }

  /** Credits the buyer and locks `amount` CU (bound to the payee when `bind` says so); returns the escrow id. */
  async lock(
    amountCu: number,
    options: { bind?: boolean; credit?: bigint; validMs?: number; window?: number; agreed?: number } = {},
  ): Promise<string> {
    if (options.credit !== 0n)
      await this.store.credit(BUYER.tenant, BUYER.party, options.credit ?? nano('1'));
    const locked = await this.ok(BUYER, ESCROW_METHOD.lock, {
      op_ref: this.opRef(),
      amount_cu: amountCu,
      valid_until_ms: this.clock.now() + (options.validMs ?? 3_600_000),
      ...(options.window === undefined ? {} : { challenge_window_ms: options.window }),
    });
    const escrowId = locked.escrow_id as string;
    if (options.bind) {
      await this.ok(BUYER, ESCROW_METHOD.bind, {
        op_ref: this.opRef(),
        escrow_id: escrowId,
        payee_id: PAYEE.party,
        ...(options.agreed === undefined ? {} : { agreed_price_cu: options.agreed }),
      });
    }
    return escrowId;
  }

  status(escrowId: string, caller: EscrowCaller = BUYER): Promise<Record<string, JsonValue>> {
    return this.ok(caller, ESCROW_METHOD.status, { escrow_id: escrowId });
  }

  balance(caller: EscrowCaller): Promise<bigint> {
    return this.store.balance(caller.tenant, caller.party);
  }

  /**
   * Conservation (design §4.7 invariant 1): per escrow `locked = released + reclaimed + remaining` (held by
   * construction and by a CHECK constraint), and across the ledger Σ balances + Σ remaining + Σ pending
   * payouts = Σ credits; after a tick nothing is pending.
   */
  async expectConserved(): Promise<void> {
    await this.agent.tick();
    const totals = await this.store.totals();
    expect(totals.pending).toBe(0n);
    expect(totals.balances + totals.remaining + totals.pending).toBe(totals.credits);
    // What the metrics read as CU held is the ledger's remaining (docs/operations.md "Metrics").
    expect(await this.store.held()).toBe(totals.remaining);
  }
}

/** An agent over the test's store, with the store's restart (`reopen`) where the backend has one. */
export function escrowHarnessOf(
  t: StoreUnderTest<EscrowStore>,
): () => Promise<EscrowHarness & { reopen: StoreUnderTest<EscrowStore>['reopen'] }> {
  return () => Promise.resolve(Object.assign(new EscrowHarness(t.store), { reopen: t.reopen }));
}
