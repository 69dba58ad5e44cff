import { z } from 'zod';
import type { JsonValue } from '../../shared/json.js';
import { ACMP_CODE, AcmpError } from '../wire/errors.js';

/*
 * Where a payee is paid (Layer 7 §6.4, Layer 4 §7.1): its registered payout list, in order of
 * preference; the agent takes the first rail it supports (docs/acmp-escrow.md "Payout configuration").
 */

/** The rails this agent pays on: its own credit ledger. */
const SUPPORTED_PAYOUT_RAILS: readonly string[] = ['credit-ledger'];

/** One payout entry; `credit-ledger` names an account of this agent's ledger, other rails their own fields. */
export type PayoutEntry = Readonly<Record<string, JsonValue>> & { readonly rail: string };

const EntrySchema = z
  .object({ rail: z.string().min(1).max(64), account: z.string().min(1).max(200).optional() })
  .catchall(z.json())
  .refine((e) => e.rail !== 'credit-ledger' || e.account !== undefined, 'credit-ledger needs an account');

/** A payout list as Layer 7 §6.4 writes it (the value of `payout`). */
export const PayoutListSchema = z.array(EntrySchema).min(1).max(16);

/**
 * The route of the payee's payouts of one escrow, as recorded on it: the rail and account paid, or held
 * (`no_supported_rail`) when the payee's list names no rail this agent supports.
 */
export type PayeeRoute =
  | { readonly rail: 'credit-ledger'; readonly account: string; readonly source: 'identity' | 'configured' }
  | { readonly rail: null; readonly held: 'no_supported_rail' };

/**
 * Parses a payout list (the in-band `payout` of a claim, or the operator's file).
 * @throws AcmpError -32602 `payout_invalid`.
 */
export function parsePayoutList(value: unknown): readonly PayoutEntry[] {
  const parsed = PayoutListSchema.safeParse(value);
  if (!parsed.success) throw new AcmpError(ACMP_CODE.invalidParams, { reason: 'payout_invalid' });
  return parsed.data;
}

/**
 * The route for a payee: without a registered list, its identity account (the behaviour before payout
 * configuration); else the first supported entry; else held.
 */
export function routeOf(payee: string, list: readonly PayoutEntry[] | undefined): PayeeRoute {
  if (list === undefined) return { rail: 'credit-ledger', account: payee, source: 'identity' };
  const entry = list.find((e) => SUPPORTED_PAYOUT_RAILS.includes(e.rail));
  // The schema gives every credit-ledger entry (the one rail supported) its account.
  if (entry === undefined || typeof entry.account !== 'string')
    return { rail: null, held: 'no_supported_rail' };
  return { rail: 'credit-ledger', account: entry.account, source: 'configured' };
}

/** The route as escrowStatus shows it: the account only to the payee (L4 §7.1: not to the other party). */
export function encodeRoute(route: PayeeRoute, showAccount: boolean): Record<string, JsonValue> {
  if (route.rail === null) return { rail: null, held: route.held };
  return showAccount
    ? { rail: route.rail, account: route.account, source: route.source }
    : { rail: route.rail, source: route.source };
}
