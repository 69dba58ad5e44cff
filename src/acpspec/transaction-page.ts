import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import type { TransactionStore, TransactionSummary } from './transaction-store.js';

/** Which page of a caller's transactions (absent caller: `anonymous`). */
export interface TransactionPage {
  caller?: string;
  /** The last transaction id of the previous page; default: from the start. */
  after?: string;
  /** Default 100, at most 1000. */
  limit?: number;
}

const MAX_PAGE = 1000;

/**
 * A page of the caller's own transactions in the store's id order; `next` names the last one when the
 * page is full (another page may follow). Another caller's transactions are never listed.
 */
export async function transactionPage(
  store: TransactionStore,
  page?: TransactionPage,
): Promise<{ transactions: TransactionSummary[]; next?: string }> {
  const limit = Math.min(Math.max(page?.limit ?? 100, 1), MAX_PAGE);
  const owner = page?.caller ?? ANONYMOUS_IDENTITY;
  const rows = await store.transactions(owner, { after: page?.after ?? '', limit });
  const next = rows.length === limit ? rows[rows.length - 1]?.transactionId : undefined;
  return { transactions: rows, ...(next === undefined ? {} : { next }) };
}
