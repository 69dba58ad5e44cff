import { z } from 'zod';
import { AcmpError, ACMP_CODE } from '../../acmp/wire/errors.js';
import { ESCROW_METHOD } from '../../acmp/escrow/constants.js';
import type { Signer } from '../../acmp/identity/signer.js';
import type { AcmpResult, Payload } from '../../acmp/wire/task-messages.js';
import { verifyProof } from '../../acmp/wire/proof.js';
import { systemIds, type IdSource } from '../../shared/ids.js';
import type { JsonValue } from '../../shared/json.js';
import {
  createEscrowClient,
  type EscrowClient,
  type EscrowClientOptions,
  type EscrowStatus,
} from './client.js';
import { walletEscrowClient } from './wallet-client.js';
import type { Wallet } from '../../wallet/wallet.js';
import { signingEscrowClient } from './signing-client.js';
import type { PaymentGate, PaymentGated } from '../../acmp/buyer/identity-gate.js';

/** The field of an escrowLock result [L4 §4.1] the buyer relies on; the rest it does not read. */
const LockResultSchema = z.looseObject({ escrow_id: z.string().min(1) });

/**
 * The buyer's side of Layer 4 over A2A: lock, bind, release after verifying the proof, reclaim, dispute.
 * op_refs are derived from what each call is about (the escrow, the task) or generated, so a retry after
 * a lost answer replays instead of paying twice (L4 §3).
 */
export class BuyerEscrow implements PaymentGated<BuyerEscrow> {
  readonly client: EscrowClient;

  /**
   * With a `signer` (Layer 7), each lock names its DID (`buyer_did`, ours), so its disputes are signed
   * evidence the agent checks (L7 §4.1); `client` is then the signing client ({@link connectBuyerEscrow}).
   */
  private readonly signer: Signer | undefined;
  private readonly gate: PaymentGate | undefined;

  constructor(
    client: EscrowClient,
    private readonly ids: IdSource = systemIds,
    party: { signer?: Signer | undefined; gate?: PaymentGate | undefined } = {},
  ) {
    this.client = client;
    this.signer = party.signer;
    this.gate = party.gate;
  }

  /**
   * This escrow with its bind and release waiting for `gate` first (Layer 7 §3: the provider proves its
   * DID before the first payment to it); the lock, a reclaim and a dispute move nothing to the payee.
   */
  gatedBy(gate: PaymentGate): BuyerEscrow {
    return new BuyerEscrow(this.client, this.ids, { signer: this.signer, gate });
  }

  /**
   * Locks `amountCu` until `validUntilMs` [L4 §4.1]; pass `opRef` to make a retry of this lock safe.
   * @throws AcmpError -33099 `escrow_lock_malformed` when the agent's result names no escrow_id; the
   *   agent's -35xxx errors.
   */
  async lock(
    amountCu: number,
    validUntilMs: number,
    options: { opRef?: string; challengeWindowMs?: number } = {},
  ): Promise<string> {
    const result = await this.client.call(ESCROW_METHOD.lock, {
      op_ref: options.opRef ?? this.ids.newId('op'),
      amount_cu: amountCu,
      valid_until_ms: validUntilMs,
      ...(options.challengeWindowMs === undefined ? {} : { challenge_window_ms: options.challengeWindowMs }),
      ...(this.signer ? { buyer_did: this.signer.did } : {}),
    });
    const locked = LockResultSchema.safeParse(result);
    if (!locked.success) throw new AcmpError(ACMP_CODE.internal, { reason: 'escrow_lock_malformed' });
    return locked.data.escrow_id;
  }

  /** Binds the escrow to the provider's payee id [L4 §4.2], optionally capping claims at the agreed price. */
  async bind(
    escrowId: string,
    payeeId: string,
    options: { agreedPriceCu?: number; challengeWindowMs?: number } = {},
  ): Promise<Record<string, JsonValue>> {
    await this.gate?.beforePayment();
    return this.client.call(ESCROW_METHOD.bind, {
      op_ref: `bind-${escrowId}`,
      escrow_id: escrowId,
      payee_id: payeeId,
      ...(options.agreedPriceCu === undefined ? {} : { agreed_price_cu: options.agreedPriceCu }),
      ...(options.challengeWindowMs === undefined ? {} : { challenge_window_ms: options.challengeWindowMs }),
    });
  }

  /**
   * The fast path [L4 §4.3]: verifies the result's proof against the input the buyer sent (Layer 3 §3.1),
   * then releases its `cost_cu` to the payee (`to.payeeId`) with the task id and proof as the audit trail.
   * @throws AcmpError -33099 `proof_…` when the proof does not verify (nothing is released: dispute the
   *   provider's claim instead); the agent's -35xxx errors.
   */
  async releaseFor(
    escrowId: string,
    to: { payeeId: string; result: AcmpResult },
    input: { output: Payload; input: Payload; proofMethod: string },
  ): Promise<Record<string, JsonValue>> {
    const { payeeId, result } = to;
    await this.gate?.beforePayment();
    const check = verifyProof(result.proof, {
      method: input.proofMethod,
      output: input.output,
      input: input.input,
    });
    if (!check.ok)
      throw new AcmpError(
        ACMP_CODE.internal,
        { reason: `proof_${check.reason}` },
        { message: 'Provider protocol violation' },
      );
    return this.client.call(ESCROW_METHOD.release, {
      op_ref: `release-${result.task_id}`,
      escrow_id: escrowId,
      amount_cu: result.cost_cu,
      payee_id: payeeId,
      task_id: result.task_id,
      ...(result.proof ? { proof: result.proof } : {}),
    });
  }

  /** Takes back the remainder, or `amountCu` of it [L4 §4.4]. */
  reclaim(
    escrowId: string,
    options: { amountCu?: number; opRef?: string } = {},
  ): Promise<Record<string, JsonValue>> {
    return this.client.call(ESCROW_METHOD.reclaim, {
      op_ref: options.opRef ?? this.ids.newId('op'),
      escrow_id: escrowId,
      ...(options.amountCu === undefined ? {} : { amount_cu: options.amountCu }),
    });
  }

  /** Disputes the pending claim within its window [L4 §4.6]. */
  dispute(escrowId: string, reason: string, evidence?: JsonValue): Promise<Record<string, JsonValue>> {
    return this.client.call(ESCROW_METHOD.dispute, {
      op_ref: `dispute-${escrowId}-${this.ids.newId('op')}`,
      escrow_id: escrowId,
      reason,
      ...(evidence === undefined ? {} : { evidence }),
    });
  }

  status(escrowId: string): Promise<EscrowStatus> {
    return this.client.status(escrowId);
  }

  /** Every transition of the escrow as it happens (a claim included), until it closes. */
  watch(escrowId: string, options?: { signal?: AbortSignal }): AsyncIterable<EscrowStatus> {
    return this.client.watch(escrowId, options);
  }
}

/** How a buyer reaches its escrow agent, its Layer 7 signer, and the operator's wallet. */
export interface BuyerEscrowOptions extends EscrowClientOptions {
  /** The buyer's signer: locks name its DID, requests (disputes above all, L7 §4.1) are signed. */
  signer?: Signer;
  /** Every mutating call passes through it (docs/acmp-wallet.md). */
  wallet?: Wallet | undefined;
}

/**
 * Connects a buyer to an escrow agent. The wallet is outermost: it authorizes and records a call before
 * the signer signs it, so a replay after a crash (Layer 7 §6.5) is signed afresh; its operations left
 * pending at this agent are replayed before this returns.
 */
export async function connectBuyerEscrow(options: BuyerEscrowOptions): Promise<BuyerEscrow> {
  const { signer, wallet } = options;
  const direct = await createEscrowClient(options);
  const signed = signer ? signingEscrowClient(direct, signer) : direct;
  return new BuyerEscrow(wallet ? await walletEscrowClient(signed, wallet) : signed, options.ids, {
    signer,
  });
}
