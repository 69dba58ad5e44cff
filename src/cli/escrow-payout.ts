import { readFileSync } from 'node:fs';
import { registerPayout } from '../acmp/escrow/payout-config.js';
import { PayoutListSchema, type PayoutEntry } from '../acmp/escrow/payout-route.js';
import { isIdentity } from '../shared/identity.js';
import { isJsonObject } from '../shared/json.js';
import type { KyselyEscrowStore } from '../storage/escrow/escrow-store-kysely.js';
import { UsageError, type CliIo } from './io.js';

/*
 * A payee's payout configuration (Layer 7 §6.4; docs/acmp-escrow.md "Payout configuration"): the
 * operator's out-of-band registration, and the file a party sends in band with its claim.
 */

/**
 * A payout list from a file: `wallet payout`'s output (`{"payout": [...]}`) or the bare list.
 * @throws UsageError when the file cannot be read or holds no valid list.
 */
export function readPayoutFile(path: string): readonly PayoutEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    throw new UsageError(`cannot read a JSON payout list from ${path}`);
  }
  const list = Array.isArray(value) ? value : isJsonObject(value) ? value.payout : undefined;
  const parsed = PayoutListSchema.safeParse(list);
  if (!parsed.success)
    throw new UsageError(
      `${path}: expected {"payout": [{"rail": "credit-ledger", "account": "..."}, ...]} (1 to 16 entries)`,
    );
  return parsed.data;
}

/**
 * `escrow payout <party> [--file <payout.json>]`: registers the party's payout list (replacing any
 * earlier one, routing its held payouts, which the running agent then pays), or shows the registered one.
 */
export async function payoutVerb(
  store: KyselyEscrowStore,
  call: { file: string | undefined; positionals: string[] },
  io: CliIo,
): Promise<number> {
  const [party, extra] = call.positionals;
  if (party === undefined || extra !== undefined || !isIdentity(party) || party === 'anonymous')
    throw new UsageError('payout takes one <party> identity (agent:<name>, token:<hex> or a DID)');
  if (call.file === undefined) {
    const config = await store.transaction((tx) => tx.payoutConfig('', party));
    io.out(
      config
        ? JSON.stringify({ payout: config.payout, set_by: config.setBy, at_ms: config.at }, null, 2)
        : `${party} registered no payout list: paid on its identity account`,
    );
    return 0;
  }
  const payout = readPayoutFile(call.file);
  const done = await registerPayout(store, { tenant: '', party, payout, setBy: 'operator', at: Date.now() });
  io.out(`registered the payout list of ${party}; ${done.payouts.length} held payout(s) routed`);
  return 0;
}
