import { parseCu, formatCu } from '../acmp/escrow/amounts.js';
import { createEscrowAgent } from '../acmp/escrow/agent.js';
import { isIdentity } from '../shared/identity.js';
import { resolveHostConfig, resolveStorageConfig } from '../server/config.js';
import { migrateAll } from '../server/host.js';
import { storageModules } from '../server/modules.js';
import { openDatabase } from '../storage/database.js';
import { KyselyEscrowStore } from '../storage/escrow-store-kysely.js';
import { UsageError, type CliIo } from './io.js';

/** The operator's verbs: they act on the escrow agent's database, never on the party wire. */
export const OPERATOR_VERBS = ['credit', 'resolve', 'ledger'];

type Values = { db?: string; 'data-dir'?: string; account?: string; amount?: string; 'to-payee'?: string };

/**
 * `escrow credit|resolve|ledger`: funding an account (the credit-ledger rail's funding edge, L4 §7),
 * resolving a dispute (our agent policy, docs/acmp-escrow.md "Disputes"), and the ledger totals with the
 * conservation check. Each runs in one transaction of the agent's store, beside a running agent.
 */
export async function escrowOperator(
  verb: string,
  values: Values,
  positionals: string[],
  io: CliIo,
): Promise<number> {
  const storage = resolveStorageConfig({ db: values.db, 'data-dir': values['data-dir'] }, io.env);
  if (storage.db === 'memory') throw new UsageError('a memory store keeps no ledger');
  const database = openDatabase({ url: storage.db, dataDir: storage.dataDir });
  try {
    if (database.dialect === 'sqlite')
      await migrateAll(
        database,
        storageModules(resolveHostConfig({ 'data-dir': storage.dataDir, 'no-tls': true }, {})),
      );
    const store = new KyselyEscrowStore(database);
    switch (verb) {
      case 'credit': {
        if (positionals.length > 0) throw new UsageError('credit takes no positional argument');
        const account = identity(values.account);
        const balance = await store.credit('', account, amount(values.amount, '--amount'));
        io.out(`credited ${account}: balance ${formatCu(balance)} CU`);
        return 0;
      }
      case 'resolve': {
        const [escrowId, extra] = positionals;
        if (!escrowId || extra !== undefined) throw new UsageError('resolve takes one <escrow-id>');
        const toPayee = values['to-payee'] === '0' ? 0n : amount(values['to-payee'], '--to-payee');
        const record = await createEscrowAgent({ store }).resolve(escrowId, toPayee, 'operator');
        io.out(
          `resolved ${escrowId}: ${formatCu(record.dispute!.resolution!.toPayee)} CU to ${record.payee}, ${formatCu(record.dispute!.resolution!.toBuyer)} CU to ${record.buyer}`,
        );
        return 0;
      }
      default: {
        if (values.account !== undefined)
          io.out(`${values.account}: ${formatCu(await store.balance('', identity(values.account)))} CU`);
        const t = await store.totals();
        const conserved = t.balances + t.remaining + t.pending === t.credits;
        io.out(
          `balances ${formatCu(t.balances)} + held ${formatCu(t.remaining)} + pending payouts ${formatCu(t.pending)} = ${formatCu(t.balances + t.remaining + t.pending)} CU; credited ${formatCu(t.credits)} CU: ${conserved ? 'conserved' : 'NOT CONSERVED'}`,
        );
        return conserved ? 0 : 1;
      }
    }
  } finally {
    await database.close();
  }
}

function identity(value: string | undefined): string {
  if (value === undefined || !isIdentity(value) || value === 'anonymous')
    throw new UsageError('--account must be an identity (agent:<name> or token:<32 hex>)');
  return value;
}

function amount(value: string | undefined, flag: string): bigint {
  const parsed = value === undefined ? undefined : parseCu(Number(value));
  if (!parsed?.ok || parsed.nano <= 0n)
    throw new UsageError(`${flag} must be a positive amount of CU in units of 1e-9`);
  return parsed.nano;
}
