import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { checkPatchPolicy } from '../acpspec/delta.js';
import { envelopeKind } from '../acpspec/envelope.js';
import { containsPersonalData } from '../acpspec/pii.js';
import { checkEnvelope } from '../acpspec/validate.js';
import { isJsonObject } from '../shared/json.js';
import { UsageError, type CliIo } from './io.js';

/** One problem of an envelope file: where (JSON Pointer) and which rule. */
export interface EnvelopeProblem {
  pointer: string;
  rule: string;
  message: string;
}

/** A patch whose every operation has a string `op` and a rooted `path` (RFC 6901), the rest unread. */
const PatchHeadsSchema = z.array(z.looseObject({ op: z.string(), path: z.string().startsWith('/') }));

/**
 * Checks a parsed envelope against the schema and, for a delta, the patch policy (docs/acpspec-core.md "Deltas"), and
 * returns every problem at once. The policy is checked whenever the patch is a list of operations, even
 * if the schema failed elsewhere, so one run shows everything a receiver would refuse statically.
 */
export function checkEnvelopeValue(value: unknown): EnvelopeProblem[] {
  const problems: EnvelopeProblem[] = [];
  const schema = checkEnvelope(value);
  if (!schema.ok)
    for (const issue of schema.issues)
      problems.push({ pointer: issue.pointer, rule: issue.keyword, message: issue.message });
  // The policy reads only each operation's op and path; the schema has reported the rest of each one.
  const patch = PatchHeadsSchema.safeParse(isJsonObject(value) ? value['patch'] : undefined);
  if (patch.success)
    for (const issue of checkPatchPolicy(patch.data))
      problems.push({
        pointer: issue.pointer,
        rule: issue.rule,
        message: 'breaks the delta policy (ACP_POLICY_VIOLATION)',
      });
  return problems;
}

/** `a2a-commerce acp validate <file>`: exit 0 when valid, 1 with every problem listed otherwise. */
export function acpValidate(positionals: string[], io: CliIo): number {
  const [file, extra] = positionals;
  if (!file || extra !== undefined) throw new UsageError('acp validate takes exactly one <file>');
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    io.err(`${file}: not a JSON file (${error instanceof SyntaxError ? 'syntax error' : 'cannot read it'})`);
    return 1;
  }
  const problems = checkEnvelopeValue(value);
  if (problems.length > 0) {
    io.err(`${file}: invalid envelope, ${problems.length} problem(s):`);
    for (const p of problems) io.err(`  ${p.pointer || '/'}  ${p.rule}: ${p.message}`);
    return 1;
  }
  const envelope = checkEnvelope(value);
  if (!envelope.ok) return 1;
  const { envelope_id, transaction_id } = envelope.envelope;
  const personal = containsPersonalData(envelope.envelope) ? '; carries personal data (TLS only)' : '';
  io.out(
    `${file}: valid ${envelopeKind(envelope.envelope)} ${envelope_id} of transaction ${transaction_id}${personal}`,
  );
  return 0;
}
