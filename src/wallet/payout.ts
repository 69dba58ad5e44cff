import { z } from 'zod';
import { LocalError } from '../shared/errors.js';
import type { JsonValue } from '../shared/json.js';

/*
 * Where the wallet's owner wants to be paid (Layer 7 §6.4): an ordered list of rails, the first mutually
 * supported one wins. Read from the operator's wallet file with the limits (docs/acmp-wallet.md "Payout").
 */

/** One payout rail entry; `credit-ledger` names an account, other rails carry their own fields. */
export type PayoutRail = Readonly<Record<string, JsonValue>> & { readonly rail: string };

/** Rails that settle on a blockchain (P4: at least one entry must not). */
const BLOCKCHAIN_RAILS: readonly string[] = ['x402'];

/** The file's `payout` list, as Layer 7 §6.4 writes it. */
export const PayoutSchema = z
  .array(
    z.union([
      z.strictObject({ rail: z.literal('credit-ledger'), account: z.string().min(1).max(200) }),
      z
        .object({
          rail: z
            .string()
            .min(1)
            .max(64)
            .refine((r) => r !== 'credit-ledger'),
        })
        .catchall(z.json()),
    ]),
  )
  .max(16);

/**
 * The payout list, checked and frozen.
 * @throws LocalError `CONFIG_INVALID` when every entry is a blockchain rail (L7 §6.4, RFC-0001 P4).
 */
export function payoutOf(
  entries: z.infer<typeof PayoutSchema> | undefined,
  where: string,
): readonly PayoutRail[] {
  const list = frozenPayout(entries ?? []);
  if (list.length > 0 && list.every((e) => BLOCKCHAIN_RAILS.includes(e.rail)))
    throw new LocalError(
      'CONFIG_INVALID',
      `wallet limits ${where} payout: at least one rail must not be a blockchain rail (credit-ledger, say)`,
    );
  return list;
}

/** A deep, frozen copy of a payout list: nothing reachable from it can be changed. */
export function frozenPayout(list: readonly PayoutRail[]): readonly PayoutRail[] {
  return deepFreeze(structuredClone(list));
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
