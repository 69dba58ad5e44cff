import { parseCu, formatCu } from '../acmp/escrow/amounts.js';
import { createEscrowAgent } from '../acmp/escrow/agent.js';
import { LocalError } from '../shared/errors.js';
import { isIdentity } from '../shared/identity.js';
import { resolveHostConfig, resolveStorageConfig } from '../server/config.js';
import { migrateAll } from '../server/host-migrations.js';
import { storageModules } from './host-modules.js';
import { openDatabase } from '../storage/sql/database.js';
import { KyselyEscrowStore } from '../storage/escrow/escrow-store-kysely.js';
import { payoutVerb } from './escrow-payout.js';
import { UsageError, type CliIo } from './io.js';

/** The operator's verbs: they act on the escrow agent's database, never on the party wire. */
export const OPERATOR_VERBS = ['credit', 'resolve', 'ledger', 'payout'];

type Values = {
  db?: string;
  'data-dir'?: string;
  account?: string;
  amount?: string;
  'to-payee'?: string;
  'op-ref'?: string;
  file?: string;
};

/** One operator command: its verb, and its flags and positionals as `parseArgs` read them. */
export interface OperatorCall {
  verb: string;
  values: Values;
  positionals: string[];
}

/**
 * `escrow credit|resolve|ledger|payout`: funding an account (the credit-ledger rail's funding edge, L4 §7),
 * resolving a dispute (our agent policy, docs/acmp-escrow.md "Disputes"), and the ledger totals with the
 * conservation check, and a party's payout list (L7 §6.4). Each runs in one transaction of the agent's store, beside a running agent.
 */
export async function escrowOperator(call: OperatorCall, io: CliIo): Promise<number> {
  const { values } = call;
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
    switch (call.verb) {
      case 'credit':
        return await credit(store, call, io);
      case 'resolve':
        return await resolve(store, call, io);
      case 'payout':
        return await payoutVerb(store, { file: values.file, positionals: call.positionals }, io);
      default:
        return await ledger(store, values, io);
    }
  } finally {
    await database.close();
  }
}

/**
 * `escrow credit`: adds `--amount` to the `--account` balance; with `--op-ref` at most once per reference,
 * so a deposit whose outcome was lost can be sent again (a repeat says so and changes nothing).
 * @throws LocalError `CONFLICT` when the reference was used for another account or amount.
 */
async function credit(
  store: KyselyEscrowStore,
  { values, positionals }: OperatorCall,
  io: CliIo,
): Promise<number> {
  if (positionals.length > 0) throw new UsageError('credit takes no positional argument');
  const account = identity(values.account);
  const cu = amount(values.amount, '--amount');
  const ref = values['op-ref'];
  if (ref === undefined) {
    const balance = await store.credit('', account, cu);
    io.out(`credited ${account}: balance ${formatCu(balance)} CU`);
    return 0;
  }
  if (ref.trim() === '') throw new UsageError('--op-ref must not be empty');
  const entry = { tenant: '', account, amount: cu, ref, at: Date.now() };
  const { balance, replayed } = await store.creditOnce(entry);
  const done = replayed ? 'already credited' : 'credited';
  const note = replayed ? ' (nothing changed)' : '';
  io.out(`${done} ${account} under op-ref ${ref}${note}: balance ${formatCu(balance)} CU`);
  return 0;
}

/** `escrow resolve`: `--to-payee` of the disputed claim to the payee, the rest to the buyer. */
async function resolve(
  store: KyselyEscrowStore,
  { values, positionals }: OperatorCall,
  io: CliIo,
): Promise<number> {
  const [escrowId, extra] = positionals;
  if (!escrowId || extra !== undefined) throw new UsageError('resolve takes one <escrow-id>');
  const toPayee = values['to-payee'] === '0' ? 0n : amount(values['to-payee'], '--to-payee');
  const record = await createEscrowAgent({ store }).resolve(escrowId, toPayee, 'operator');
  const resolution = record.dispute?.resolution;
  if (!resolution)
    throw new LocalError('INVALID_STATE', `escrow ${escrowId} records no resolution after resolve`);
  io.out(
    `resolved ${escrowId}: ${formatCu(resolution.toPayee)} CU to ${record.payee}, ${formatCu(resolution.toBuyer)} CU to ${record.buyer}`,
  );
  return 0;
}

/**
 * `escrow ledger`: an account's balance when asked, then the totals and whether they are conserved
 * (exit 1 if not).
 */
async function ledger(store: KyselyEscrowStore, values: Values, io: CliIo): Promise<number> {
  // Any ledger account may be read: a party's identity, or an account a payout list names (L7 §6.4).
  if (values.account !== undefined)
    io.out(`${values.account}: ${formatCu(await store.balance('', ledgerAccount(values.account)))} CU`);
  const t = await store.totals();
  const conserved = t.balances + t.remaining + t.pending === t.credits;
  io.out(
    `balances ${formatCu(t.balances)} + held ${formatCu(t.remaining)} + pending payouts ${formatCu(t.pending)} = ${formatCu(t.balances + t.remaining + t.pending)} CU; credited ${formatCu(t.credits)} CU: ${conserved ? 'conserved' : 'NOT CONSERVED'}`,
  );
  return conserved ? 0 : 1;
}

function identity(value: string | undefined): string {
  if (value === undefined || !isIdentity(value) || value === 'anonymous')
    throw new UsageError('--account must be an identity (agent:<name> or token:<32 hex>)');
  return value;
}

function ledgerAccount(value: string): string {
  if (value.trim() === '' || value.length > 200) throw new UsageError('--account must name a ledger account');
  return value;
}

function amount(value: string | undefined, flag: string): bigint {
  const parsed = value === undefined ? undefined : parseCu(Number(value));
  if (!parsed?.ok || parsed.nano <= 0n)
    throw new UsageError(`${flag} must be a positive amount of CU in units of 1e-9`);
  return parsed.nano;
}
