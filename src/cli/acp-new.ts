import { z } from 'zod';
import { readJsonFile } from './acp-remote.js';
import { checkEnvelopeValue } from './acp-validate.js';
import { buildDelta, buildSnapshot, type PatchOperation, type Producer } from '../acpspec/envelope.js';
import { ACP_ENVELOPE_SCHEMA } from '../acpspec/schema.js';
import { LocalError } from '../shared/errors.js';
import { isJsonObject } from '../shared/json.js';
import { UsageError, type CliIo } from './io.js';

/** Flags of `acp new`. */
export interface AcpNewFlags {
  stage?: string;
  type?: string;
  'transaction-id'?: string;
  producer?: string;
  note?: string;
}

/** The producer the CLI writes when `--producer` is not given. */
const CLI_PRODUCER = 'agent:a2a-commerce-cli';

/** What `acp new` reads of the envelope schema: the transaction's `stage` and `type` enums. */
const TransactionEnumsSchema = z.object({
  $defs: z.object({
    transaction: z.object({
      properties: z.object({
        stage: z.object({ enum: z.array(z.string()) }),
        type: z.object({ enum: z.array(z.string()) }),
      }),
    }),
  }),
});

/**
 * The values the envelope schema allows at `$defs.transaction.properties.<field>.enum`.
 * @throws LocalError `CONFIG_INVALID` when the schema file lists no such enum (a broken installation).
 */
function allowed(field: 'stage' | 'type'): string[] {
  const parsed = TransactionEnumsSchema.safeParse(ACP_ENVELOPE_SCHEMA);
  if (!parsed.success)
    throw new LocalError('CONFIG_INVALID', 'the envelope schema lists no transaction stage and type values');
  return parsed.data.$defs.transaction.properties[field].enum;
}

function pick(field: 'stage' | 'type', value: string | undefined, fallback: string): string {
  const values = allowed(field);
  if (value === undefined) return fallback;
  if (!values.includes(value))
    throw new UsageError(`--${field} "${value}" is not one of: ${values.join(', ')}`);
  return value;
}

function producerOf(flags: AcpNewFlags): Producer {
  return { agent_id: flags.producer ?? CLI_PRODUCER, role: 'buyer_agent' };
}

function newEvent(actor: string, type: string, data: Record<string, string>): Record<string, unknown> {
  return {
    event_id: `ev-${crypto.randomUUID()}`,
    type,
    occurred_at: new Date().toISOString(),
    actor,
    subject: '/transaction',
    data,
  };
}

/** A fresh snapshot: new ids, now, the smallest state the schema accepts (no personal data). */
function newSnapshot(flags: AcpNewFlags): unknown {
  const stage = pick('stage', flags.stage, 'inquiry');
  const type = pick('type', flags.type, 'retail_purchase');
  const producer = producerOf(flags);
  const opened = new Date().toISOString();
  return buildSnapshot({
    transaction_id: flags['transaction-id'] ?? `tx-${crypto.randomUUID()}`,
    producer,
    state: {
      transaction: { type, stage, opened_at: opened },
      parties: {},
      consent: {},
      vehicles: {},
      quote: { status: 'none' },
      financing: { method: 'undecided' },
      fulfillment: {},
      events: [newEvent(producer.agent_id, 'transaction.opened', {})],
    },
  } as never);
}

/** A delta on top of the envelope in `parentFile`: a note event, and the stage when `--stage` is given. */
function newDelta(parentFile: string, flags: AcpNewFlags): unknown {
  const parent = readJsonFile(parentFile);
  const envelopeId = isJsonObject(parent) ? parent['envelope_id'] : undefined;
  const transactionId = isJsonObject(parent) ? parent['transaction_id'] : undefined;
  if (typeof envelopeId !== 'string' || typeof transactionId !== 'string') {
    throw new UsageError(
      `${parentFile} has no envelope_id and transaction_id: give the envelope this delta follows`,
    );
  }
  const producer = producerOf(flags);
  const patch: PatchOperation[] = [];
  if (flags.stage !== undefined)
    patch.push({ op: 'replace', path: '/transaction/stage', value: pick('stage', flags.stage, '') });
  const type = flags.stage !== undefined ? 'transaction.stage_changed' : 'note.added';
  const event = newEvent(producer.agent_id, type, flags.note !== undefined ? { text: flags.note } : {});
  patch.push({ op: 'add', path: '/events/-', value: event });
  return buildDelta({ transaction_id: transactionId, producer, parent_envelope_id: envelopeId, patch });
}

/**
 * `acp new snapshot [--stage s] [--type t] [--transaction-id id] [--producer agent-id]` and
 * `acp new delta <parent.json> [--stage s] [--note text] [--producer agent-id]`: prints a fresh envelope
 * (UUIDv7 envelope id, now as produced_at) that validates against the schema.
 */
export function acpNew(positionals: string[], flags: AcpNewFlags, io: CliIo): number {
  const [kind, file, extra] = positionals;
  let envelope: unknown;
  if (kind === 'snapshot' && file === undefined) envelope = newSnapshot(flags);
  else if (kind === 'delta' && file !== undefined && extra === undefined) envelope = newDelta(file, flags);
  else throw new UsageError('acp new takes "snapshot", or "delta <parent.json>"');
  const problems = checkEnvelopeValue(envelope);
  if (problems.length > 0) {
    for (const p of problems) io.err(`  ${p.pointer || '/'}  ${p.rule}: ${p.message}`);
    throw new Error('the new envelope does not validate (a bug: please report it)');
  }
  io.out(JSON.stringify(envelope, null, 2));
  return 0;
}
