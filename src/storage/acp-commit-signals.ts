import { z } from 'zod';
import { IngestFeed } from '../acpspec/ingest-feed.js';
import type { TransactionCommitted } from '../acpspec/transaction-store.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import type { Metrics } from '../shared/metrics.js';
import type { Database } from './database.js';
import { lagProbe, PgListener } from './pg-listener.js';

/** The PostgreSQL channel ACPspec commits are signalled on (docs/acpspec-mcp.md "Subscriptions"). */
export const ACP_COMMIT_CHANNEL = 'acp_commit_signals';

/**
 * An owner longer than this is left out of the payload (the listener then reads it from the head), so a
 * payload stays far below PostgreSQL's 8000-byte NOTIFY limit: transaction ids are at most 128 characters.
 */
const MAX_OWNER = 1_000;

const SignalSchema = z.object({ t: z.string(), v: z.number().int().positive(), o: z.string().optional() });

/** The NOTIFY payload of a commit: ids and the version only, no content (and so no personal data). */
export function encodeCommitSignal(committed: TransactionCommitted): string {
  const { transactionId: t, version: v, owner } = committed;
  return JSON.stringify(owner.length > MAX_OWNER ? { t, v } : { t, v, o: owner });
}

/** The commit of a payload (its owner absent when it was too long); undefined for one this version does not know. */
function decodeCommitSignal(payload: string): z.infer<typeof SignalSchema> | undefined {
  try {
    const parsed = SignalSchema.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Options of {@link AcpCommitSignals}. */
export interface AcpCommitSignalsOptions {
  /** The owner of a transaction whose signal left it out (a head read). */
  ownerOf(transactionId: string): Promise<string | undefined>;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
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
  private readonly logger: Logger;

  constructor(
    database: Pick<Database, 'db' | 'dialect'> & Partial<Pick<Database, 'url' | 'listens'>>,
    private readonly options: AcpCommitSignalsOptions,
  ) {
    this.logger = options.logger ?? silentLogger;
    if (database.dialect === 'postgres' && database.url !== undefined) {
      this.listener = new PgListener({
        url: database.url,
        channel: ACP_COMMIT_CHANNEL,
        logger: this.logger,
        connections: database.listens,
        onPayload: (payload) => this.heard(payload),
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

  private heard(payload: string): void {
    const signal = decodeCommitSignal(payload);
    if (signal === undefined) return;
    if (signal.o !== undefined) {
      this.feed.publish({ transactionId: signal.t, version: signal.v, owner: signal.o });
      return;
    }
    this.options.ownerOf(signal.t).then(
      (owner) => {
        if (owner !== undefined) this.feed.publish({ transactionId: signal.t, version: signal.v, owner });
      },
      (error: unknown) => this.logger.warn('acp.commit_signal_unresolved', errorFields(error)),
    );
  }
}
