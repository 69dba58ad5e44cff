import { sleep } from '../shared/async.js';
import { systemClock, type Clock } from '../shared/clock.js';
import { ANONYMOUS_IDENTITY } from '../shared/identity.js';
import type { IdSource } from '../shared/ids.js';
import { canonicalJson, canonicalJsonShared } from '../shared/jcs.js';
import { errorFields, silentLogger, type Logger } from '../shared/logger.js';
import { ACP_DEFAULT_ACCEPTED_VERSIONS, type Kind } from './constants.js';
import { assertPatchPolicy } from './delta.js';
import {
  buildSnapshot,
  envelopeKind,
  isDelta,
  newEnvelopeId,
  stateOf,
  type AcpAck,
  type AcpEvent,
  type AcpState,
  type Envelope,
  type Producer,
  type SnapshotEnvelope,
} from './envelope.js';
import { AcpError, isAcpError, isAcpId } from './errors.js';
import { deltaTransition, snapshotTransition, type Transition } from './materialise.js';
import { containsPersonalData } from './pii.js';
import type { TransactionHead, TransactionStore } from './transaction-store.js';
import { createStateCache } from './state-cache.js';
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
  /** Parsed states kept in memory to skip re-parsing the head (default 1000 transactions). */
  stateCacheSize?: number;
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
  state(transactionId: string, options?: CallerContext): Promise<{ envelope: SnapshotEnvelope; bytes: Buffer }>;
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

/** Creates the receiver over a {@link TransactionStore}. */
export function createAcpReceiver(options: AcpReceiverOptions): AcpReceiver {
  const { store, receiverAgentId } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const versions = options.acceptedVersions ?? ACP_DEFAULT_ACCEPTED_VERSIONS;
  const cache = createStateCache(options.stateCacheSize ?? 1000);
  // Canonical text of state subtrees by identity: states are never mutated (deltas copy on write), so
  // the next state of a transaction re-serialises only what changed.
  const canonicalMemo = new WeakMap<object, string>();

  async function ingest(raw: unknown, context: IngestContext): Promise<AcpAck> {
    const envelope = parseEnvelope(raw);
    try {
      const ack = await ingestValid(envelope, context);
      logger.debug('acp.ingest', { envelope_id: ack.envelope_id, transaction_id: ack.transaction_id });
      return ack;
    } catch (error) {
      logger.info('acp.ingest.rejected', { envelope_id: envelope.envelope_id, ...errorFields(error) });
      if (isAcpError(error)) {
        error.ids = { envelope_id: envelope.envelope_id, transaction_id: envelope.transaction_id };
        throw error;
      }
      throw new AcpError('ACP_INTERNAL', undefined, undefined, { cause: error });
    }
  }

  async function ingestValid(envelope: Envelope, context: IngestContext): Promise<AcpAck> {
    const caller = context.caller ?? ANONYMOUS_IDENTITY;
    if (!versions.includes(envelope.acp_version)) {
      throw new AcpError('ACP_VERSION_UNSUPPORTED', undefined, { accepted: [...versions] });
    }
    const kind = envelopeKind(envelope);
    if (!options.accepts.includes(kind)) throw new AcpError('ACP_KIND_NOT_ACCEPTED', undefined, { kind, accepts: [...options.accepts] });
    if (isDelta(envelope)) assertPatchPolicy(envelope.patch);
    if (!context.secure && containsPersonalData(envelope)) throw new AcpError('ACP_TRANSPORT_INSECURE');
    const text = canonicalJson(envelope);
    for (let attempt = 1; ; attempt++) {
      // The head is read before the replay check: a head that moved past this envelope's parent because
      // another host stored this very envelope means the replay check below sees it (one commit writes both).
      const head = await store.head(envelope.transaction_id);
      const replay = await replayAck(envelope, text, caller, head);
      if (replay) return replay;
      assertOwner(head, caller);
      const ack = await commitOn(envelope, head, { kind, text, caller });
      if (ack) return ack;
      // Another writer moved the head or stored this id between our reads and our commit. It may have
      // stored this very envelope (the same delta sent to two hosts at once): design "Deltas" makes that a
      // replay, never a conflict, so start over from the replay check. A delta whose parent is no longer
      // the head then gets ACP_ENVELOPE_CONFLICT from transitionFor; a snapshot is recomputed.
      if (attempt >= COMMIT_ATTEMPTS) {
        throw new AcpError('ACP_ENVELOPE_CONFLICT', 'transaction head moved', headDetails(await store.head(envelope.transaction_id)));
      }
    }
  }

  /** Computes the transition on `head` and commits it; undefined when the store refused (stale or duplicate). */
  async function commitOn(
    envelope: Envelope,
    head: TransactionHead | undefined,
    inbound: { kind: Kind; text: string; caller: string },
  ): Promise<AcpAck | undefined> {
    const transition = await transitionFor(envelope, head);
    const { snapshot, state, events } = materialise(transition, envelope.transaction_id);
    const result = await store.commit({
      transactionId: envelope.transaction_id,
      expectedVersion: head?.version ?? 0,
      owner: inbound.caller,
      envelope: {
        envelopeId: envelope.envelope_id,
        kind: inbound.kind,
        parentEnvelopeId: envelope.parent_envelope_id,
        text: inbound.text,
        receivedAt: snapshot.produced_at,
      },
      state: { envelopeId: snapshot.envelope_id, text: canonicalJsonShared(snapshot, canonicalMemo) },
      events,
      firstSeq: (head?.eventCount ?? 0) + 1,
    });
    if (!result.ok) return undefined;
    cache.set(envelope.transaction_id, { version: result.version, stateEnvelopeId: snapshot.envelope_id, state });
    return { envelope_id: envelope.envelope_id, transaction_id: envelope.transaction_id, state_envelope_id: snapshot.envelope_id };
  }

  /** The state snapshot envelope after a transition, with the receiver's own events added. */
  function materialise(transition: Transition, transactionId: string): { snapshot: SnapshotEnvelope; state: AcpState; events: AcpEvent[] } {
    const idOptions = { clock, ...(options.ids ? { ids: options.ids } : {}) };
    const header = buildSnapshot({ transaction_id: transactionId, producer: options.producer, state: transition.state }, idOptions);
    const own: AcpEvent[] = transition.drafts.map((draft) => ({
      event_id: newEnvelopeId(idOptions),
      type: draft.type,
      occurred_at: header.produced_at,
      actor: receiverAgentId,
      subject: draft.subject,
      data: draft.data,
    }));
    const state: AcpState = own.length === 0 ? transition.state : { ...transition.state, events: [...transition.state.events, ...own] };
    return { snapshot: { ...header, ...state }, state, events: [...transition.appended, ...own] };
  }

  /**
   * The original ack when this envelope id is stored with the same canonical bytes (design "Deltas").
   * Envelope ids are unique across the store (issue 9): an id already used for another envelope — other
   * bytes, or a state snapshot this receiver minted, in any transaction — is `ACP_ENVELOPE_CONFLICT`.
   */
  async function replayAck(envelope: Envelope, text: string, caller: string, head: TransactionHead | undefined): Promise<AcpAck | undefined> {
    const use = await store.findEnvelopeId(envelope.envelope_id);
    if (use === undefined) return undefined;
    if (use.role === 'state') throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already names another envelope');
    const stored = use.envelope;
    assertOwner(stored.transactionId === head?.transactionId ? head : await store.head(stored.transactionId), caller);
    if (stored.text !== text) throw new AcpError('ACP_ENVELOPE_CONFLICT', 'envelope id already used with other content');
    return { envelope_id: stored.envelopeId, transaction_id: stored.transactionId, state_envelope_id: stored.stateEnvelopeId };
  }

  async function transitionFor(envelope: Envelope, head: TransactionHead | undefined): Promise<Transition> {
    const context = { receiverAgentId, nowMs: clock.now() };
    if (!isDelta(envelope)) return snapshotTransition(head ? heldState(head) : undefined, envelope, context);
    const parent = envelope.parent_envelope_id;
    if (head === undefined) throw new AcpError('ACP_PARENT_UNKNOWN');
    if (parent !== head.headEnvelopeId && parent !== head.stateEnvelopeId) {
      if (await store.isKnownEnvelope(envelope.transaction_id, parent)) {
        throw new AcpError('ACP_ENVELOPE_CONFLICT', 'parent is not the transaction head', headDetails(head));
      }
      throw new AcpError('ACP_PARENT_UNKNOWN');
    }
    return deltaTransition(heldState(head), envelope, context);
  }

  function heldState(head: TransactionHead): AcpState {
    const cached = cache.get(head.transactionId);
    if (cached && cached.version === head.version && cached.stateEnvelopeId === head.stateEnvelopeId) return cached.state;
    return stateOf(JSON.parse(head.stateText) as SnapshotEnvelope);
  }

  /** A transaction of another caller is reported exactly as one that does not exist (A2A §3.3.2). */
  async function requireHead(transactionId: string, caller: string | undefined): Promise<TransactionHead> {
    // An id outside the schema's shape names no transaction; the store never sees it (PostgreSQL would
    // refuse U+0000 or an over-long value with an error, SQLite would simply find nothing).
    if (!isAcpId(transactionId)) throw new AcpError('ACP_TRANSACTION_UNKNOWN');
    const head = await store.head(transactionId);
    if (head === undefined || head.owner !== (caller ?? ANONYMOUS_IDENTITY)) {
      throw new AcpError('ACP_TRANSACTION_UNKNOWN', undefined, undefined, { ids: { transaction_id: transactionId } });
    }
    return head;
  }

  return {
    ingest,
    async state(transactionId, read) {
      const head = await requireHead(transactionId, read?.caller);
      return { envelope: JSON.parse(head.stateText) as SnapshotEnvelope, bytes: Buffer.from(head.stateText, 'utf8') };
    },
    async events(transactionId, page) {
      await requireHead(transactionId, page?.caller);
      const limit = Math.min(Math.max(page?.limit ?? 100, 1), MAX_PAGE);
      const rows = await store.events(transactionId, { after: page?.after ?? 0, limit });
      const last = rows[rows.length - 1];
      return { events: rows.map((r) => r.event), ...(rows.length === limit && last ? { next: last.seq } : {}) };
    },
    follow: (transactionId, follow) => followEvents(store, (id) => requireHead(id, follow.caller), transactionId, follow),
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
  return head ? { head_envelope_id: head.headEnvelopeId, state_envelope_id: head.stateEnvelopeId } : undefined;
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
