import { sleep } from '../shared/async.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import type { IdSource } from '../shared/ids.js';
import { LocalError } from '../shared/errors.js';
import { canonicalJson } from '../shared/jcs.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { ACP_DEFAULT_ACCEPTED_VERSIONS, ACP_VERSION, type Kind } from './constants.js';
import { assertPatchPolicy } from './delta.js';
import {
  envelopeKind,
  isDelta,
  type AcpAck,
  type AcpEvent,
  type Envelope,
  type Producer,
  type SnapshotEnvelope,
} from './envelope.js';
import { AcpError, isAcpError, isAcpId } from './errors.js';
import { createHeldStateCache, type HeldState } from './held-state.js';
import { containsPersonalData } from './pii.js';
import type { TransactionHead, TransactionStore } from './transaction-store.js';
import {
  commitTransition,
  heldEventTexts,
  transitionOn,
  type CommitContext,
  type Inbound,
} from './receiver-commit.js';
import { composeSnapshot, composeStateText, stateBodyOf } from './state-body.js';
import { parseEnvelope } from './validate.js';

/** Options of {@link createAcpReceiver}. */
export interface AcpReceiverOptions {
  store: TransactionStore;
  /** Kinds this agent accepts (its card's `accepts`). */
  accepts: readonly Kind[];
  /** Envelope versions accepted (default `['0.1']`). */
  acceptedVersions?: readonly string[];
  /** This receiver's agent id, matched against consent `granted_to`. */
  receiverAgentId: string;
  /** Producer written on materialised state snapshots. */
  producer: Producer;
  clock?: Clock;
  /** Id source; `newId()` MUST return a UUIDv7 (see `newEnvelopeId`). */
  ids?: IdSource;
  logger?: Logger;
  /** Approximate memory budget of the states held in memory (default 128 MiB). */
  stateCacheBytes?: number;
}

/**
 * Who is calling: the caller's identity (src/shared/identity.ts); absent means `anonymous`, the caller of a
 * host without tokens. A transaction belongs to the caller that created it; only that caller reads or extends it.
 */
export interface CallerContext {
  caller?: string;
}

/** What {@link AcpReceiver.ingest} needs to know about the channel and the caller. */
export interface IngestContext extends CallerContext {
  /** Whether the envelope arrived over TLS (personal data travels only over TLS). */
  secure: boolean;
}

/** The transport-free receiving side of ACPspec. */
export interface AcpReceiver {
  /**
   * Validates and ingests one envelope (pipeline in docs/acpspec-core.md).
   * @throws AcpError with the code of the first rule the envelope breaks; `ACP_POLICY_VIOLATION` for a
   *   transaction another caller created.
   */
  ingest(envelope: unknown, context: IngestContext): Promise<AcpAck>;
  /**
   * The current materialised state snapshot and its canonical bytes.
   * @throws `ACP_TRANSACTION_UNKNOWN` (also for another caller's transaction).
   */
  state(
    transactionId: string,
    options?: CallerContext,
  ): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }>;
  /** A page of the event stream after `after` (default 0). @throws `ACP_TRANSACTION_UNKNOWN`. */
  events(
    transactionId: string,
    options?: CallerContext & { after?: number; limit?: number },
  ): Promise<{ events: AcpEvent[]; next?: number }>;
  /**
   * Follows the stream by polling the store, so it sees events written by any process. Ends quietly when
   * `signal` aborts. @throws `ACP_TRANSACTION_UNKNOWN` on the first step.
   */
  follow(
    transactionId: string,
    options: CallerContext & { after?: number; signal: AbortSignal; pollMs?: number },
  ): AsyncIterable<AcpEvent & { seq: number }>;
}

const MAX_PAGE = 1000;
/** Commits tried per ingest before a moving head is reported as ACP_ENVELOPE_CONFLICT (docs "decision b"). */
const COMMIT_ATTEMPTS = 3;
const DEFAULT_CACHE_BYTES = 128 * 1024 * 1024;

/** Creates the receiver over a {@link TransactionStore}. */
export function createAcpReceiver(options: AcpReceiverOptions): AcpReceiver {
  const { store, receiverAgentId } = options;
  const logger = options.logger ?? silentLogger;
  const versions = options.acceptedVersions ?? ACP_DEFAULT_ACCEPTED_VERSIONS;
  const cache = createHeldStateCache(options.stateCacheBytes ?? DEFAULT_CACHE_BYTES);
  const context: CommitContext = {
    store,
    cache,
    clock: options.clock ?? systemClock,
    ids: options.ids,
    receiverAgentId,
    header: { acp_version: ACP_VERSION, producer: options.producer },
    memo: new WeakMap(),
  };

  async function ingest(raw: unknown, ingestContext: IngestContext): Promise<AcpAck> {
    const envelope = parseEnvelope(raw);
    try {
      const ack = await ingestValid(envelope, ingestContext);
      logger.debug('acp.ingest', { envelope_id: ack.envelope_id, transaction_id: ack.transaction_id });
      return ack;
    } catch (error) {
      logger.info('acp.ingest.rejected', { envelope_id: envelope.envelope_id, ...errorFields(error) });
      if (isAcpError(error)) {
        error.ids = { envelope_id: envelope.envelope_id, transaction_id: envelope.transaction_id };
        throw error;
      }
      throw new AcpError('ACP_INTERNAL', undefined, { cause: error });
    }
  }

  async function ingestValid(envelope: Envelope, ingestContext: IngestContext): Promise<AcpAck> {
    const caller = ingestContext.caller ?? ANONYMOUS_IDENTITY;
    if (!versions.includes(envelope.acp_version)) {
      throw new AcpError('ACP_VERSION_UNSUPPORTED', undefined, { details: { accepted: [...versions] } });
    }
    const kind = envelopeKind(envelope);
    if (!options.accepts.includes(kind))
      throw new AcpError('ACP_KIND_NOT_ACCEPTED', undefined, {
        details: { kind, accepts: [...options.accepts] },
      });
    if (isDelta(envelope)) assertPatchPolicy(envelope.patch);
    if (!ingestContext.secure && containsPersonalData(envelope)) throw new AcpError('ACP_TRANSPORT_INSECURE');
    const inbound: Inbound = { kind, text: canonicalJson(envelope), caller };
    return (await optimistic(envelope, inbound)) ?? (await checked(envelope, inbound));
  }

  /**
   * The common case without a read (issue 10): on the state this receiver holds for the transaction (or, for
   * a snapshot, on no transaction), compute and commit at once. The store's compare-and-set and its id
   * registry refuse the commit if another writer moved the head or the id is taken; any refusal, and any
   * error of the transition, hands over to {@link checked}, which reads the store and answers exactly as if
   * this attempt had not happened — a replay still gets its ack, a stale parent its conflict.
   */
  async function optimistic(envelope: Envelope, inbound: Inbound): Promise<AcpAck | undefined> {
    const held = cache.get(envelope.transaction_id);
    if (held === undefined ? isDelta(envelope) : held.head.owner !== inbound.caller) return undefined;
    let transition: ReturnType<typeof transitionOn>;
    try {
      transition = transitionOn(envelope, held, context);
    } catch (error) {
      if (isAcpError(error)) return undefined;
      throw error;
    }
    return 'parentMismatch' in transition
      ? undefined
      : commitTransition(envelope, held, transition, inbound, context);
  }

  /** The full pipeline on the store's head: replay check, owner, transition, commit (docs "decision b"). */
  async function checked(envelope: Envelope, inbound: Inbound): Promise<AcpAck> {
    for (let attempt = 1; ; attempt++) {
      // The head is read before the replay check: a head that moved past this envelope's parent because
      // another host stored this very envelope means the replay check below sees it (one commit writes both).
      // The state read may be newer than `head`; its own head was still read before the replay check.
      const read = await store.head(envelope.transaction_id);
      const held = read === undefined ? undefined : await heldFor(read);
      const head = held?.head;
      const replay = await replayAck(envelope, inbound, head);
      if (replay) return replay;
      assertOwner(head, inbound.caller);
      const transition = transitionOn(envelope, held, context);
      if ('parentMismatch' in transition) {
        if (await store.isKnownEnvelope(envelope.transaction_id, transition.parentMismatch)) {
          throw new AcpError('ACP_ENVELOPE_CONFLICT', 'parent is not the transaction head', {
            details: headDetails(held?.head),
          });
        }
        throw new AcpError('ACP_PARENT_UNKNOWN');
      }
      const ack = await commitTransition(envelope, held, transition, inbound, context);
      if (ack) return ack;
      // Another writer moved the head or stored this id between our reads and our commit. It may have
      // stored this very envelope (the same delta sent to two hosts at once): design "Deltas" makes that a
      // replay, never a conflict, so start over from the replay check. A delta whose parent is no longer
      // the head then gets ACP_ENVELOPE_CONFLICT; a snapshot is recomputed.
      if (attempt >= COMMIT_ATTEMPTS) {
        throw new AcpError('ACP_ENVELOPE_CONFLICT', 'transaction head moved', {
          details: headDetails(await store.head(envelope.transaction_id)),
        });
      }
    }
  }

  /**
   * The original ack when this envelope id is stored with the same canonical bytes (design "Deltas").
   * Envelope ids are unique across the store (issue 9): an id already used for another envelope — other
   * bytes, or a state snapshot this receiver minted, in any transaction — is `ACP_ENVELOPE_CONFLICT`.
   */
  async function replayAck(
    envelope: Envelope,
    inbound: Inbound,
    head: TransactionHead | undefined,
  ): Promise<AcpAck | undefined> {
    const use = await store.findEnvelopeId(envelope.envelope_id);
    if (use === undefined) return undefined;
    if (use.role === 'state')
      throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already names another envelope');
    const stored = use.envelope;
    assertOwner(
      stored.transactionId === head?.transactionId ? head : await store.head(stored.transactionId),
      inbound.caller,
    );
    if (stored.text !== inbound.text)
      throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already used with other content');
    return {
      envelope_id: stored.envelopeId,
      transaction_id: stored.transactionId,
      state_envelope_id: stored.stateEnvelopeId,
    };
  }

  /** The held state as of `head`: this receiver's own when it is that version, else read from the store. */
  async function heldFor(head: TransactionHead): Promise<HeldState> {
    const cached = cache.get(head.transactionId);
    if (
      cached &&
      cached.head.version === head.version &&
      cached.head.stateEnvelopeId === head.stateEnvelopeId
    ) {
      return cached.head === head ? cached : { ...cached, head };
    }
    const stored = await store.state(head.transactionId);
    if (stored === undefined) throw new LocalError('INVALID_STATE', 'a transaction head without its state');
    const { acp_version, producer, ...objects } = stored.body;
    const held: HeldState = {
      head: stored.head,
      header: { acp_version, producer },
      state: { ...objects, events: stored.events },
      eventTexts: stored.eventTexts,
      eventBytes: stored.eventTexts.reduce((sum, text) => sum + text.length, 0),
    };
    cache.set(held);
    return held;
  }

  /** A transaction of another caller is reported exactly as one that does not exist (A2A §3.3.2). */
  async function requireHead(transactionId: string, caller: string | undefined): Promise<TransactionHead> {
    // An id outside the schema's shape names no transaction; the store never sees it (PostgreSQL would
    // refuse U+0000 or an over-long value with an error, SQLite would simply find nothing).
    if (!isAcpId(transactionId)) throw new AcpError('ACP_TRANSACTION_UNKNOWN');
    const head = await store.head(transactionId);
    if (head === undefined || head.owner !== (caller ?? ANONYMOUS_IDENTITY)) {
      throw new AcpError('ACP_TRANSACTION_UNKNOWN', undefined, {
        ids: { transaction_id: transactionId },
      });
    }
    return head;
  }

  return {
    ingest,
    async state(transactionId, read) {
      const held = await heldFor(await requireHead(transactionId, read?.caller));
      const meta = {
        envelopeId: held.head.stateEnvelopeId,
        transactionId,
        producedAt: held.head.stateProducedAt,
      };
      const body = stateBodyOf(held.header, held.state);
      const text = composeStateText({ meta, body, eventTexts: heldEventTexts(held) }, context.memo);
      return { envelope: composeSnapshot(meta, body, held.state.events), bytes: Buffer.from(text, 'utf8') };
    },
    async events(transactionId, page) {
      await requireHead(transactionId, page?.caller);
      const limit = Math.min(Math.max(page?.limit ?? 100, 1), MAX_PAGE);
      const rows = await store.events(transactionId, { after: page?.after ?? 0, limit });
      const last = rows[rows.length - 1];
      return {
        events: rows.map((r) => r.event),
        ...(rows.length === limit && last ? { next: last.seq } : {}),
      };
    },
    follow: (transactionId, follow) =>
      followEvents(store, (id) => requireHead(id, follow.caller), transactionId, follow),
  };
}

/**
 * Ingest into another caller's transaction is refused (its content is never read or changed); the refusal
 * names no detail of it.
 */
function assertOwner(head: TransactionHead | undefined, caller: string): void {
  if (head !== undefined && head.owner !== caller) {
    throw new AcpError('ACP_POLICY_VIOLATION', 'transaction_id belongs to another agent');
  }
}

function headDetails(head: TransactionHead | undefined): Record<string, string> | undefined {
  return head
    ? { head_envelope_id: head.headEnvelopeId, state_envelope_id: head.stateEnvelopeId }
    : undefined;
}

async function* followEvents(
  store: TransactionStore,
  requireHead: (id: string) => Promise<TransactionHead>,
  transactionId: string,
  options: { after?: number; signal: AbortSignal; pollMs?: number },
): AsyncGenerator<AcpEvent & { seq: number }> {
  const { signal } = options;
  await requireHead(transactionId);
  let cursor = options.after ?? 0;
  while (!signal.aborted) {
    const rows = await store.events(transactionId, { after: cursor, limit: MAX_PAGE });
    for (const row of rows) {
      if (signal.aborted) return;
      cursor = row.seq;
      yield { ...row.event, seq: row.seq };
    }
    if (rows.length < MAX_PAGE) {
      try {
        await sleep(options.pollMs ?? 250, { signal });
      } catch {
        return;
      }
    }
  }
}
