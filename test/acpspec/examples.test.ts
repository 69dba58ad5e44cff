import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kind } from '../../src/acpspec/constants.js';
import { ACP_ERRORS } from '../../src/acpspec/errors.js';
import { checkEnvelopeValue } from '../../src/cli/acp-validate.js';
import type { HostFlags } from '../../src/server/config.js';
import { DEFAULT_ACP_PRODUCER } from '../../src/cli/host-modules.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { ensureSelfSignedCertificate, selfSignedPaths } from '../../src/server/tls.js';
import { fetchTrusting } from '../../src/shared/fetch.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

/*
 * docs/examples/ is what a newcomer copies first: every file must do what docs/examples/README.md says,
 * against the schema and against a real host configured like `a2a-commerce serve`.
 */

const EXAMPLES = new URL('../../docs/examples/', import.meta.url).pathname;
const read = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(join(EXAMPLES, name), 'utf8')) as Record<string, unknown>;
const list = (folder: string): string[] =>
  readdirSync(join(EXAMPLES, folder))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => `${folder}/${f}`);

let tlsFlags: HostFlags;
beforeAll(async () => {
  const dir = tempDir('a2ac-examples-cert-');
  await ensureSelfSignedCertificate(dir);
  const paths = selfSignedPaths(dir);
  tlsFlags = { 'tls-cert': paths.cert, 'tls-key': paths.key };
});
afterAll(cleanup);

interface Receiver {
  send(name: string): Promise<{ status: number; code?: string }>;
  sendValue(envelope: unknown): Promise<{ status: number; code?: string }>;
  state(transactionId: string): Promise<Record<string, unknown>>;
}

/** A host with the ACPspec module as `serve` runs it (the default producer), over TLS unless told. */
async function receiver(options: { accepts?: Kind[]; plain?: boolean } = {}): Promise<Receiver> {
  const flags: HostFlags = options.plain
    ? { 'no-tls': true, 'no-personal-data': true }
    : { ...tlsFlags, 'no-tls': false };
  const host = await startTestHost({
    flags,
    modules: [
      acpModule({
        producer: { ...DEFAULT_ACP_PRODUCER },
        ...(options.accepts ? { accepts: options.accepts } : {}),
      }),
    ],
  });
  const fetch = fetchTrusting(host.tls?.cert);
  const sendValue = async (envelope: unknown): Promise<{ status: number; code?: string }> => {
    const res = await fetch(`${host.url}/acp/v0.1/envelopes`, {
      method: 'POST',
      headers: { 'content-type': 'application/acp+json' },
      body: canonicalJson(envelope),
    });
    const body = (await res.json()) as { acp_error?: { code: string } };
    return { status: res.status, ...(body.acp_error ? { code: body.acp_error.code } : {}) };
  };
  return {
    send: (name) => sendValue(read(name)),
    sendValue,
    async state(transactionId) {
      const res = await fetch(`${host.url}/acp/v0.1/transactions/${transactionId}/state`);
      return (await res.json()) as Record<string, unknown>;
    },
  };
}

async function sendAll(to: Receiver, names: string[]): Promise<void> {
  for (const name of names) expect([name, await to.send(name)]).toEqual([name, { status: 200 }]);
}

describe('docs/examples: valid envelopes', () => {
  const valid = [...list('lifecycle'), 'personal-data.snapshot.json'];

  it.each(valid)('%s validates against the schema', (name) => {
    expect(checkEnvelopeValue(read(name))).toEqual([]);
  });

  it('the lifecycle covers every stage the schema allows', async () => {
    const to = await receiver({ plain: true });
    const stages: string[] = [];
    for (const name of list('lifecycle').filter((n) => !n.includes('cancelled'))) {
      await sendAll(to, [name]);
      stages.push(((await to.state('tx-example-1'))['transaction'] as { stage: string }).stage);
    }
    expect(stages).toEqual(['inquiry', 'lead', 'quote', 'deal', 'contracted', 'fulfilled', 'closed']);
    const other = await receiver({ plain: true });
    await sendAll(other, [
      'lifecycle/01-inquiry.snapshot.json',
      'lifecycle/02-lead.delta.json',
      'lifecycle/03-quote.delta.json',
      'lifecycle/08-cancelled.delta.json',
    ]);
    expect(((await other.state('tx-example-1'))['transaction'] as { stage: string }).stage).toBe('cancelled');
  });

  it('the personal-data example is accepted over TLS by a host like serve', async () => {
    await sendAll(await receiver(), ['personal-data.snapshot.json']);
  });
});

/** How each error example is triggered (docs/examples/README.md "What triggers each error"). */
const TRIGGERS: Record<string, { after?: string[]; accepts?: Kind[]; plain?: boolean; file?: string }> = {
  ACP_SCHEMA_INVALID: {},
  ACP_VERSION_UNSUPPORTED: {},
  ACP_PARENT_UNKNOWN: {},
  ACP_PATCH_FAILED: { after: ['lifecycle/01-inquiry.snapshot.json'] },
  ACP_POLICY_VIOLATION: { after: ['lifecycle/01-inquiry.snapshot.json'] },
  ACP_ENVELOPE_CONFLICT: { after: ['lifecycle/01-inquiry.snapshot.json'] },
  ACP_CONSENT_REQUIRED: {},
  ACP_KIND_NOT_ACCEPTED: { after: ['lifecycle/01-inquiry.snapshot.json'], accepts: ['snapshot'] },
  ACP_TRANSPORT_INSECURE: { plain: true, file: 'personal-data.snapshot.json' },
};

describe('docs/examples: what triggers each error', () => {
  it('has a trigger for every envelope-triggered code, and the README names every code', () => {
    const files = list('errors').map((f) => f.replace(/^errors\/|\.json$/g, ''));
    expect(files.every((code) => code in TRIGGERS)).toBe(true);
    const readme = readFileSync(join(EXAMPLES, 'README.md'), 'utf8');
    for (const code of Object.keys(ACP_ERRORS))
      expect([code, readme.includes(`| \`${code}\``)]).toEqual([code, true]);
  });

  it.each(Object.entries(TRIGGERS))('%s', async (code, trigger) => {
    const name = trigger.file ?? `errors/${code}.json`;
    if (code !== 'ACP_SCHEMA_INVALID' && code !== 'ACP_POLICY_VIOLATION')
      expect(checkEnvelopeValue(read(name))).toEqual([]);
    const to = await receiver({
      ...(trigger.accepts ? { accepts: trigger.accepts } : {}),
      ...(trigger.plain ? { plain: true } : {}),
    });
    await sendAll(to, trigger.after ?? []);
    const answer = await to.send(name);
    expect(answer.code).toBe(code);
    expect(answer.status).toBe(ACP_ERRORS[code as keyof typeof ACP_ERRORS].httpStatus);
  });
});

describe('a2a-commerce acp new / validate', () => {
  it('prints a fresh valid snapshot and a delta that follows it, both accepted by a host', async () => {
    const dir = tempDir();
    const snapshot = await runCliProcess(['acp', 'new', 'snapshot', '--stage', 'lead']);
    expect(snapshot.code).toBe(0);
    const parsed = JSON.parse(snapshot.stdout) as { envelope_id: string; transaction_id: string };
    expect(parsed.envelope_id).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-7/);
    writeFileSync(join(dir, 'snapshot.json'), snapshot.stdout);
    const delta = await runCliProcess([
      'acp',
      'new',
      'delta',
      join(dir, 'snapshot.json'),
      '--stage',
      'quote',
      '--note',
      'priced',
    ]);
    expect(delta.code).toBe(0);
    const next = JSON.parse(delta.stdout) as Record<string, unknown>;
    expect(next['parent_envelope_id']).toBe(parsed.envelope_id);
    expect(checkEnvelopeValue(next)).toEqual([]);
    const to = await receiver();
    expect(await to.sendValue(parsed)).toEqual({ status: 200 });
    expect(await to.sendValue(next)).toEqual({ status: 200 });
  });

  it('refuses a stage that is not allowed, listing the allowed ones', async () => {
    const run = await runCliProcess(['acp', 'new', 'snapshot', '--stage', 'negotiating']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /--stage "negotiating" is not one of: inquiry, lead, quote, deal, contracted, fulfilled, closed, cancelled/,
    );
  });

  it('acp validate lists the allowed values of an enum', async () => {
    const run = await runCliProcess(['acp', 'validate', join(EXAMPLES, 'errors/ACP_SCHEMA_INVALID.json')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /\/transaction\/stage {2}enum: must be one of: "inquiry", "lead", "quote", "deal", "contracted", "fulfilled", "closed", "cancelled"/,
    );
  });
});
