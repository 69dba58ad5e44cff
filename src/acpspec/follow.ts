import { sleep } from '../shared/async.js';
import type { AcpEvent } from './envelope.js';
import type { TransactionStore } from './transaction-store.js';

/** Events read per store read. */
const PAGE = 1000;

/**
 * A transaction's event stream after `after` (default 0), read from the store whenever it reports a
 * commit of the transaction (on PostgreSQL a commit of any host) and at least every `pollMs` (default
 * 250), the poll covering a signal that was missed. Ends quietly when `signal` aborts.
 */
export async function* followEvents(
  store: Pick<TransactionStore, 'events' | 'watchCommits'>,
  transactionId: string,
  options: { after?: number; signal: AbortSignal; pollMs?: number },
): AsyncGenerator<AcpEvent & { seq: number }> {
  const { signal } = options;
  let cursor = options.after ?? 0;
  let wake = new AbortController();
  const stop = store.watchCommits((c) => {
    if (c.transactionId === transactionId) wake.abort();
  });
  try {
    while (!signal.aborted) {
      // A commit while this read runs (or while the consumer holds an event) ends the next wait at once.
      if (wake.signal.aborted) wake = new AbortController();
      const woken = wake.signal;
      const rows = await store.events(transactionId, { after: cursor, limit: PAGE });
      for (const row of rows) {
        if (signal.aborted) return;
        cursor = row.seq;
        yield { ...row.event, seq: row.seq };
      }
      if (rows.length < PAGE)
        await sleep(options.pollMs ?? 250, { signal: AbortSignal.any([signal, woken]) }).catch(
          () => undefined,
        );
    }
  } finally {
    stop();
  }
}
