import { ACP_EVENT_TYPES } from '../../src/acpspec/constants.js';
import { newEnvelopeId, type AcpEvent, type SnapshotEnvelope } from '../../src/acpspec/envelope.js';
import { AcpError, isAcpError } from '../../src/acpspec/errors.js';
import type { AcpReceiver, CallerContext, IngestContext } from '../../src/acpspec/receiver.js';
import { canonicalBytes } from '../../src/shared/jcs.js';

/** The rule breakages the receiver wrapper knows (the binding-level ones live in acp-fixture.ts). */
export type ReceiverBreakage =
  | 'partial-ingest'
  | 'partial-snapshot'
  | 'parent-unknown-miscoded'
  | 'state-delta'
  | 'consent-upgrade'
  | 'event-rewritten'
  | 'pii-cleartext';

type State = Awaited<ReturnType<AcpReceiver['state']>>;

/**
 * A real receiver wrapped to break one ACPspec rule, as a buggy implementation would, on both bindings
 * (the A2A binding and the HTTPS routes both call it):
 * - `partial-ingest`: a delta whose patch fails is ingested up to the operation before the failing one;
 * - `partial-snapshot`: a schema-invalid snapshot is ingested with its `vehicles` (where the kit puts the
 *   fault) kept as held;
 * - `parent-unknown-miscoded`: an unknown parent is answered `ACP_PATCH_FAILED`;
 * - `state-delta`: the state request answers a delta (a patch replacing `/transaction`);
 * - `consent-upgrade`: the consent of the last inbound snapshot replaces the held one, conflicts unrecorded;
 * - `event-rewritten`: once a transaction has taken two envelopes, its first event is shown rewritten;
 * - `pii-cleartext`: every channel is treated as TLS.
 */
export class MisbehavingReceiver implements AcpReceiver {
  private readonly accepted = new Map<string, number>();
  private readonly inboundConsent = new Map<string, unknown>();

  constructor(
    private readonly inner: AcpReceiver,
    private readonly breakage: ReceiverBreakage | undefined,
  ) {}

  async ingest(
    envelope: unknown,
    context: IngestContext,
  ): Promise<Awaited<ReturnType<AcpReceiver['ingest']>>> {
    const channel = this.breakage === 'pii-cleartext' ? { ...context, secure: true } : context;
    try {
      const ack = await this.inner.ingest(envelope, channel);
      const { transaction_id: tx, consent } = envelope as { transaction_id: string; consent?: unknown };
      this.accepted.set(tx, (this.accepted.get(tx) ?? 0) + 1);
      if (consent !== undefined) this.inboundConsent.set(tx, consent);
      return ack;
    } catch (error) {
      if (this.breakage === 'parent-unknown-miscoded' && isAcpError(error, 'ACP_PARENT_UNKNOWN'))
        throw new AcpError('ACP_PATCH_FAILED');
      if (this.breakage === 'partial-ingest' && isAcpError(error, 'ACP_PATCH_FAILED'))
        await this.ingestPrefix(envelope as { patch?: unknown[] }, channel);
      if (this.breakage === 'partial-snapshot' && isAcpError(error, 'ACP_SCHEMA_INVALID'))
        await this.ingestValidPart(envelope as SnapshotEnvelope, channel);
      throw error;
    }
  }

  /** The longest prefix of a failing delta's patch that applies, ingested under a new id. */
  private async ingestPrefix(delta: { patch?: unknown[] }, context: IngestContext): Promise<void> {
    for (let n = (delta.patch?.length ?? 0) - 1; n > 0; n--) {
      const prefix = { ...delta, envelope_id: newEnvelopeId(), patch: delta.patch?.slice(0, n) };
      const applied = await this.inner.ingest(prefix, context).then(
        () => true,
        () => false,
      );
      if (applied) return;
    }
  }

  /** The snapshot with the held vehicles instead of its own (where the kit's invalid snapshot is invalid). */
  private async ingestValidPart(snapshot: SnapshotEnvelope, context: IngestContext): Promise<void> {
    const held = await this.inner.state(snapshot.transaction_id).catch(() => undefined);
    if (held === undefined) return;
    const part = { ...snapshot, envelope_id: newEnvelopeId(), vehicles: held.envelope.vehicles };
    await this.inner.ingest(part, context).catch(() => undefined);
  }

  async state(transactionId: string, options?: CallerContext): Promise<State> {
    const real = await this.inner.state(transactionId, options);
    const envelope = this.shown(real.envelope);
    if (this.breakage === 'state-delta') {
      const delta = {
        acp_version: envelope.acp_version,
        envelope_id: newEnvelopeId(),
        transaction_id: envelope.transaction_id,
        parent_envelope_id: envelope.envelope_id,
        produced_at: envelope.produced_at,
        producer: envelope.producer,
        patch: [{ op: 'replace', path: '/transaction', value: envelope.transaction }],
      } as unknown as SnapshotEnvelope;
      return { envelope: delta, bytes: canonicalBytes(delta) };
    }
    return envelope === real.envelope ? real : { envelope, bytes: canonicalBytes(envelope) };
  }

  transactions(
    options?: Parameters<AcpReceiver['transactions']>[0],
  ): ReturnType<AcpReceiver['transactions']> {
    return this.inner.transactions(options);
  }

  async events(
    transactionId: string,
    options?: CallerContext & { after?: number; limit?: number },
  ): Promise<{ events: AcpEvent[]; next?: number }> {
    const page = await this.inner.events(transactionId, options);
    return (options?.after ?? 0) === 0
      ? { ...page, events: this.shownEvents(transactionId, page.events) }
      : page;
  }

  follow(
    transactionId: string,
    options: CallerContext & { after?: number; signal: AbortSignal; pollMs?: number },
  ): AsyncIterable<AcpEvent & { seq: number }> {
    return this.inner.follow(transactionId, options);
  }

  /** The state as the broken receiver shows it. */
  private shown(envelope: SnapshotEnvelope): SnapshotEnvelope {
    const tx = envelope.transaction_id;
    if (this.breakage === 'consent-upgrade' && this.inboundConsent.has(tx))
      return {
        ...envelope,
        consent: this.inboundConsent.get(tx) as SnapshotEnvelope['consent'],
        events: this.shownEvents(tx, envelope.events),
      };
    if (this.breakage === 'event-rewritten')
      return { ...envelope, events: this.shownEvents(tx, envelope.events) };
    return envelope;
  }

  private shownEvents(transactionId: string, events: AcpEvent[]): AcpEvent[] {
    if (this.breakage === 'consent-upgrade')
      return events.filter((e) => e.type !== ACP_EVENT_TYPES.consentConflict);
    const [first, ...rest] = events;
    if (
      this.breakage !== 'event-rewritten' ||
      first === undefined ||
      (this.accepted.get(transactionId) ?? 0) < 2
    )
      return events;
    return [{ ...first, data: { ...first.data, rewritten: true } }, ...rest];
  }
}
