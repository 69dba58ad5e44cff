import { z } from 'zod';
import { IngestFeed } from '../../acpspec/ingest-feed.js';
import type { TransactionCommitted } from '../../acpspec/transaction-store.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import type { Metrics } from '../../shared/metrics.js';
import type { Database } from '../sql/database.js';
import { lagProbe, PgListener } from '../sql/pg-listener.js';

/** The PostgreSQL channel ACPspec commits are signalled on (docs/acpspec-mcp.md "Subscriptions"). */
export const ACP_COMMIT_CHANNEL = 'acp_commit_signals';

const SignalSchema = z.object({ t: z.string(), o: z.string(), v: z.number().int().positive() });

/**
 * The NOTIFY payload of a commit: the transaction id, its owner and the new version, no content (and so
 * no personal data). A transaction id has at most 128 characters and `acp_transactions.owner` at most 255,
 * so a payload stays far below PostgreSQL's 8000-byte NOTIFY limit.
 */
export function encodeCommitSignal(committed: TransactionCommitted): string {
  return JSON.stringify({ t: committed.transactionId, o: committed.owner, v: committed.version });
}

/** The commit of a payload; undefined for one this version does not know. */
function decodeCommitSignal(payload: string): TransactionCommitted | undefined {
  try {
    const parsed = SignalSchema.safeParse(JSON.parse(payload));
    return parsed.success
      ? { transactionId: parsed.data.t, owner: parsed.data.o, version: parsed.data.v }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The commits of one ACPspec store as {@link TransactionStore.watchCommits} reports them. On PostgreSQL
 * the commit's own database transaction NOTIFYs (acp-batch-write.ts), so every host sharing the database
 * hears each commit once it is visible, through one LISTEN connection ({@link PgListener}); the writing
 * host hears its own commits the same way, never twice. On SQLite and in memory the store reports its
 * commits in this process ({@link local}). Commits signalled while the LISTEN connection was down are not
 * replayed (the host's readiness reports it down meanwhile; the receiver's followers poll regardless).
 */
export class AcpCommitSignals {
  private readonly feed = new IngestFeed();
  private readonly listener: PgListener | undefined;

  constructor(
    database: Pick<Database, 'db' | 'dialect'> & Partial<Pick<Database, 'url' | 'listens'>>,
    options: { logger?: Logger | undefined; metrics?: Metrics | undefined } = {},
  ) {
    if (database.dialect === 'postgres' && database.url !== undefined) {
      this.listener = new PgListener({
        url: database.url,
        channel: ACP_COMMIT_CHANNEL,
        logger: options.logger ?? silentLogger,
        connections: database.listens,
        onPayload: (payload) => {
          const committed = decodeCommitSignal(payload);
          if (committed !== undefined) this.feed.publish(committed);
        },
        onResync: () => undefined,
        ...lagProbe(database.db, ACP_COMMIT_CHANNEL, options.metrics),
      });
    }
  }

  /** Whether commits travel through the database (the writer NOTIFYs) rather than {@link local}. */
  get notifies(): boolean {
    return this.listener !== undefined;
  }

  /** Opens the LISTEN connection (PostgreSQL); call before serving. */
  async open(): Promise<void> {
    await this.listener?.start();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }

  watch(listener: (committed: TransactionCommitted) => void): () => void {
    return this.feed.subscribe(listener);
  }

  /** A commit of this process, reported once it is durable (where the database does not notify). */
  local(committed: TransactionCommitted): void {
    if (!this.notifies) this.feed.publish(committed);
  }
}
