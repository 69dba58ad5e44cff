import { systemClock, type Clock } from '../shared/clock.js';
import { LocalError } from '../shared/errors.js';
import type { IdSource } from '../shared/ids.js';
import { canonicalEnvelopeBytes } from './canonical.js';
import type { Kind } from './constants.js';
import { applyDelta } from './delta.js';
import {
  buildDelta,
  buildSnapshot,
  envelopeKind,
  isDelta,
  stateOf,
  type AcpAck,
  type AcpState,
  type DeltaEnvelope,
  type Envelope,
  type PatchOperation,
  type Producer,
  type SnapshotEnvelope,
} from './envelope.js';
import { AcpError, isAcpError } from './errors.js';
import { containsPersonalData } from './pii.js';
import { parseStateAnswer } from './replies.js';
import { parseEnvelope } from './validate.js';

/** What a binding (A2A client, HTTPS client) provides to the sender core. */
export interface AcpSenderTransport {
  /** Delivers one envelope as its canonical bytes. @throws AcpError from the peer. */
  send(envelope: Envelope, bytes: Buffer): Promise<AcpAck>;
  /** Asks the peer for its current state of a transaction. @throws AcpError from the peer. */
  requestState(transactionId: string): Promise<unknown>;
  /** Whether the channel is TLS (an `https:` URL). */
  readonly secure: boolean;
}

/** The peer's declaration (its agent card's extension params). */
export interface AcpPeer {
  accepts: readonly Kind[];
  emits: readonly Kind[];
  acp_version: string;
}

/** Options of {@link createAcpSenderCore}. */
export interface AcpSenderCoreOptions {
  transport: AcpSenderTransport;
  peer: AcpPeer;
  /** This agent's own declaration; it never emits a kind it did not declare. */
  self: { emits: readonly Kind[] };
  clock?: Clock;
  ids?: IdSource;
  /**
   * The full state a delta produces, for the `ACP_PARENT_UNKNOWN` fallback when the core does not hold
   * the delta's parent state itself (envelopes sent through this core are tracked automatically).
   */
  snapshotFor?: (delta: DeltaEnvelope) => Promise<AcpState | undefined>;
}

/** The state this sender last put on the wire (or learnt from the peer) for one transaction. */
export interface HeldSenderState {
  envelopeId: string;
  state: AcpState;
}

/** The transport-free sending side of ACPspec. */
export interface AcpSenderCore {
  /**
   * Sends one envelope. A delta answered with `ACP_PARENT_UNKNOWN` is not retried: a snapshot of the
   * delta's result (new `envelope_id`) is sent instead and its ack returned (docs/acpspec-core.md "Deltas").
   * @throws AcpError — local refusals (`ACP_SCHEMA_INVALID`, `ACP_VERSION_UNSUPPORTED`,
   * `ACP_KIND_NOT_ACCEPTED`, `ACP_TRANSPORT_INSECURE`) or the peer's error.
   */
  send(envelope: Envelope): Promise<AcpAck>;
  /**
   * Sends `patch` on top of the held state of the transaction: as a delta when both sides allow
   * deltas, else as a snapshot of the result. @throws LocalError `INVALID_STATE` when nothing is held.
   */
  sendDelta(transactionId: string, patch: PatchOperation[], producer: Producer): Promise<AcpAck>;
  /** The peer's state snapshot (never a delta: `ACP_MESSAGE_NONCONFORMANT`); it becomes the held state. */
  requestState(transactionId: string): Promise<SnapshotEnvelope>;
  /** What the core holds for a transaction. */
  held(transactionId: string): HeldSenderState | undefined;
}

/** Creates the sender core. */
export function createAcpSenderCore(options: AcpSenderCoreOptions): AcpSenderCore {
  return new TrackingSenderCore(options);
}

/** {@link AcpSenderCore} that tracks, per transaction, the state it last put on the wire. */
class TrackingSenderCore implements AcpSenderCore {
  private readonly transport: AcpSenderTransport;
  private readonly peer: AcpPeer;
  private readonly self: { emits: readonly Kind[] };
  private readonly idOptions: { clock: Clock; ids?: IdSource };
  private readonly states = new Map<string, HeldSenderState>();

  constructor(private readonly options: AcpSenderCoreOptions) {
    this.transport = options.transport;
    this.peer = options.peer;
    this.self = options.self;
    this.idOptions = { clock: options.clock ?? systemClock, ...(options.ids ? { ids: options.ids } : {}) };
  }

  async send(envelope: Envelope): Promise<AcpAck> {
    const valid = this.check(envelope);
    const state = this.resultOf(valid);
    try {
      return await this.deliver(valid, state);
    } catch (error) {
      if (!isDelta(valid) || !isAcpError(error, 'ACP_PARENT_UNKNOWN') || !this.canSnapshot()) throw error;
      const full = state ?? (await this.options.snapshotFor?.(valid));
      if (full === undefined) throw error;
      const snapshot = buildSnapshot(
        { transaction_id: valid.transaction_id, producer: valid.producer, state: full },
        this.idOptions,
      );
      return this.deliver(this.check(snapshot), full);
    }
  }

  async sendDelta(transactionId: string, patch: PatchOperation[], producer: Producer): Promise<AcpAck> {
    const prior = this.states.get(transactionId);
    if (prior === undefined)
      throw new LocalError('INVALID_STATE', 'no state held for this transaction; send a snapshot first');
    const base = { transaction_id: transactionId, producer };
    if (this.canDelta())
      return this.send(buildDelta({ ...base, parent_envelope_id: prior.envelopeId, patch }, this.idOptions));
    if (!this.canSnapshot()) {
      throw new AcpError('ACP_KIND_NOT_ACCEPTED', 'no kind both sides allow', {
        details: { kind: 'snapshot' },
      });
    }
    const probe = buildDelta({ ...base, parent_envelope_id: prior.envelopeId, patch }, this.idOptions);
    return this.send(buildSnapshot({ ...base, state: applyDelta(prior.state, probe) }, this.idOptions));
  }

  async requestState(transactionId: string): Promise<SnapshotEnvelope> {
    const answer = parseStateAnswer(await this.transport.requestState(transactionId), transactionId);
    this.states.set(transactionId, { envelopeId: answer.envelope_id, state: stateOf(answer) });
    return answer;
  }

  held(transactionId: string): HeldSenderState | undefined {
    return this.states.get(transactionId);
  }

  /** The local refusals: schema, the peer's version, kinds both sides declared, TLS for personal data. */
  private check(envelope: Envelope): Envelope {
    const valid = parseEnvelope(envelope);
    if (valid.acp_version !== this.peer.acp_version) {
      throw new AcpError('ACP_VERSION_UNSUPPORTED', 'peer does not accept this envelope version', {
        details: { accepted: [this.peer.acp_version] },
      });
    }
    const kind = envelopeKind(valid);
    if (!this.self.emits.includes(kind))
      throw new AcpError('ACP_KIND_NOT_ACCEPTED', 'this agent does not emit this kind', {
        details: { kind },
      });
    if (!this.peer.accepts.includes(kind))
      throw new AcpError('ACP_KIND_NOT_ACCEPTED', 'peer does not accept this kind', { details: { kind } });
    if (!this.transport.secure && containsPersonalData(valid)) throw new AcpError('ACP_TRANSPORT_INSECURE');
    return valid;
  }

  /** The state `envelope` produces, when known: a delta's only on top of the state held as its parent. */
  private resultOf(envelope: Envelope): AcpState | undefined {
    if (!isDelta(envelope)) return stateOf(envelope);
    const prior = this.states.get(envelope.transaction_id);
    return prior && prior.envelopeId === envelope.parent_envelope_id
      ? applyDelta(prior.state, envelope)
      : undefined;
  }

  /** Sends the canonical bytes; on the ack, holds the state they produced (or forgets an unknown one). */
  private async deliver(envelope: Envelope, state: AcpState | undefined): Promise<AcpAck> {
    const ack = await this.transport.send(envelope, canonicalEnvelopeBytes(envelope));
    if (state) this.states.set(envelope.transaction_id, { envelopeId: envelope.envelope_id, state });
    else this.states.delete(envelope.transaction_id);
    return ack;
  }

  private canSnapshot(): boolean {
    return this.self.emits.includes('snapshot') && this.peer.accepts.includes('snapshot');
  }

  private canDelta(): boolean {
    return this.self.emits.includes('delta') && this.peer.accepts.includes('delta');
  }
}
