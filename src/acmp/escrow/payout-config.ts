import { persist } from './outcomes.js';
import { routeOf } from './payout-route.js';
import type { EscrowRecord } from './record.js';
import { ESCROW_METHOD } from './constants.js';
import type { MutatingCommand } from './messages.js';
import type { EscrowStore, EscrowTx, PayoutConfig, StoredOp } from './store.js';
import { TransitionLog, type Payout } from './transitions.js';

/*
 * A payee's payout configuration at work (Layer 7 §6.4, Layer 4 §7.1; docs/acmp-escrow.md "Payout
 * configuration"): the transition log of an escrow routes its payee payouts by the payee's registered
 * list, and a new list routes the payouts held for want of a supported rail.
 */

/**
 * A transition log for a record held in `tx`, with its payee's registered payout list — or, for an unbound
 * escrow, that of the payee a release names (a release binds it, L4 §4.3).
 */
export async function logOf(
  tx: EscrowTx,
  record: EscrowRecord,
  command?: { readonly method: string; readonly payee?: string | null },
): Promise<TransitionLog> {
  const named = command?.method === ESCROW_METHOD.release ? command.payee : undefined;
  const payee = record.payee ?? named ?? null;
  if (payee === null) return new TransitionLog(record);
  const config = await tx.payoutConfig(record.tenant, payee);
  return new TransitionLog(record, config && { party: payee, payout: config.payout });
}

/**
 * Registers (replaces) a party's payout list out of band (the operator's `escrow payout <party> --file`), then
 * routes its held payouts by it; the agent pays them on its next tick.
 */
export async function registerPayout(store: EscrowStore, config: PayoutConfig): Promise<Unheld> {
  await store.transaction((tx) => tx.setPayoutConfig(config));
  return routeHeld(store, { tenant: config.tenant, payee: config.party }, config.at);
}

/** What routing held payouts did: the payouts now payable and the escrows whose record changed. */
export interface Unheld {
  readonly payouts: readonly Payout[];
  readonly changed: readonly EscrowRecord[];
}

/**
 * Ours (L7 §6.4 leaves an in-band field [OPEN]): an accepted claim registers the `payout` list of the
 * escrow's payee, in the claim's transaction. Only the payee's claim is accepted (its bearer identity, or
 * for a DID payee its signature, which covers the list), so only the payee changes it.
 */
export async function registerWithClaim(
  tx: EscrowTx,
  claim: { record: EscrowRecord; command: MutatingCommand; outcome: StoredOp['outcome']; at: number },
): Promise<void> {
  const { record, command, outcome, at } = claim;
  if (command.method !== ESCROW_METHOD.claim || command.payout === null || outcome.kind !== 'result') return;
  if (record.payee === null) return;
  const config = { tenant: record.tenant, party: record.payee, payout: command.payout, at };
  await tx.setPayoutConfig({ ...config, setBy: 'party' });
}

/**
 * Routes `party`'s held payouts by its current payout list, one escrow per transaction (its record locked
 * first, as every operation locks it): each routed payout is a `payout_routed` transition in the escrow's
 * log and becomes payable; with still no supported rail nothing changes.
 */
export async function routeHeld(
  store: EscrowStore,
  owner: { readonly tenant: string; readonly payee: string | null } | undefined,
  at: number,
): Promise<Unheld> {
  if (!owner?.payee) return { payouts: [], changed: [] };
  const { tenant, payee: party } = owner;
  const held = await store.transaction((tx) => tx.heldPayouts(tenant, party));
  const payouts: Payout[] = [];
  const changed: EscrowRecord[] = [];
  for (const candidate of held) {
    const done = await store.transaction(async (tx) => {
      const record = await tx.escrow(candidate.escrowId);
      const payout = (await tx.heldPayouts(tenant, party)).find((p) => p.payoutId === candidate.payoutId);
      const config = await tx.payoutConfig(tenant, party);
      const route = routeOf(party, config?.payout);
      if (!record || !payout || !config || route.rail === null) return undefined;
      const log = new TransitionLog(record);
      log.step({
        kind: 'payout_routed',
        actor: config.setBy === 'operator' ? 'operator' : party,
        at,
        patch: { payeeRoute: route },
        data: { payout_id: payout.payoutId, payee_payout: { ...route } },
      });
      const written = await persist(tx, record, log);
      await tx.routePayout(payout.payoutId, route.account, route.source);
      return { payout: { ...payout, account: route.account, route: route.source }, record: written.record };
    });
    if (done) {
      payouts.push(done.payout);
      changed.push(done.record);
    }
  }
  return { payouts, changed };
}
