import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACP_ERRORS, type AcpErrorCode } from '../../src/acpspec/errors.js';
import type { HostFlags } from '../../src/server/config.js';
import { ensureSelfSignedCertificate, selfSignedPaths } from '../../src/server/tls.js';
import { checkJsonValue } from '../../src/shared/json-edge.js';
import { canonicalJson } from '../../src/shared/jcs.js';
import { fixedClock, sequentialIds } from '../helpers/acp-builders.js';
import { givenChain, listFixtures, type AcpFixture } from '../helpers/acp-fixtures.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { transportFlags } from '../helpers/transports.js';
import {
  dataPart,
  errorCode,
  postEnvelope,
  sendRaw,
  startAcpHost,
  userMessage,
  type AcpTestHost,
} from './helpers.js';

/*
 * Seed "The Conformance Rule That Decides Everything": for the same state, the envelope bytes are identical
 * on the A2A and HTTPS bindings. Every fixture of the corpus goes through real hosts on both bindings, the
 * A2A one over both of its transports (JSON-RPC, and gRPC, where data parts cross protobuf Value/Struct).
 */

let tlsFlags: HostFlags;
beforeAll(async () => {
  // One certificate for every host of this file (generating one per host would dominate the run time).
  const dir = tempDir('a2ac-acp-cert-');
  await ensureSelfSignedCertificate(dir);
  const paths = selfSignedPaths(dir);
  tlsFlags = { 'tls-cert': paths.cert, 'tls-key': paths.key };
});
afterAll(cleanup);

type Binding = 'a2a' | 'a2a-grpc' | 'https';
const BINDINGS: readonly Binding[] = ['a2a', 'a2a-grpc', 'https'];

/** A host shaped by the fixture's directives; deterministic clock and ids so two hosts produce the same bytes. */
function hostFor(fixture: AcpFixture, secure: boolean, db = 'memory'): Promise<AcpTestHost> {
  const flags: HostFlags = {
    ...(secure ? { ...tlsFlags, db } : { 'no-tls': true, 'no-personal-data': true, db }),
    ...transportFlags('grpc'),
  };
  return startAcpHost({ flags, accepts: fixture.accepts, clock: fixedClock(), stateIds: sequentialIds() });
}

/** Delivers one envelope over a binding; the ack or the error code (with the HTTP status for HTTPS). */
async function deliver(
  host: AcpTestHost,
  binding: Binding,
  envelope: unknown,
): Promise<{ ack?: unknown; code?: string; status?: number }> {
  if (binding !== 'https') {
    let reply: Record<string, unknown>;
    try {
      reply = await sendRaw(
        host,
        userMessage([dataPart(envelope)]),
        binding === 'a2a-grpc' ? 'grpc' : 'jsonrpc',
      );
    } catch (error) {
      // Refused by the A2A front before any binding (docs/host.md "Bad input"): an A2A-level error.
      const edge = /error (-\d+):/.exec(String(error));
      if (edge) return { code: `A2A ${edge[1]}` };
      throw error;
    }
    const code = errorCode(reply);
    return code === undefined ? { ack: reply['acp_ack'] } : { code };
  }
  const res = await postEnvelope(host, canonicalJson(envelope));
  const code = (res.body['acp_error'] as { code?: string } | undefined)?.code;
  return code === undefined ? { ack: res.body['acp_ack'], status: res.status } : { code, status: res.status };
}

/** The state snapshot bytes as the binding hands them over. */
async function stateBytes(host: AcpTestHost, binding: Binding, transactionId: string): Promise<string> {
  if (binding !== 'https')
    return canonicalJson(
      await sendRaw(
        host,
        userMessage([dataPart({ acp_state_request: { transaction_id: transactionId } })]),
        binding === 'a2a-grpc' ? 'grpc' : 'jsonrpc',
      ),
    );
  return (await host.http.state(transactionId)).bytes.toString('utf8');
}

/** A host that ingested the fixture's `$given` chain (over TLS) and then the fixture, all over one binding. */
async function ingestOver(binding: Binding, fixture: AcpFixture): Promise<AcpTestHost> {
  const host = await hostFor(fixture, fixture.secure);
  for (const given of givenChain(fixture))
    expect((await deliver(host, binding, given.envelope)).code).toBeUndefined();
  const result = await deliver(host, binding, fixture.envelope);
  expect(result.code).toBeUndefined();
  expect(result.ack).toMatchObject({ envelope_id: fixture.envelope['envelope_id'] });
  return host;
}

describe('every valid fixture over both bindings, A2A over JSON-RPC and gRPC (seed "The Conformance Rule")', () => {
  it.each(listFixtures('valid').map((f) => [f.name, f] as const))(
    '%s: accepted on every binding and transport, identical state bytes',
    async (_name, fixture) => {
      const transactionId = String(fixture.envelope['transaction_id']);
      const hosts = [];
      for (const binding of BINDINGS) hosts.push(await ingestOver(binding, fixture));
      const a2aBytes = await stateBytes(hosts[0]!, 'a2a', transactionId);
      for (const host of hosts) {
        // Every host (each fed over one binding) answers the same bytes on every binding.
        for (const binding of BINDINGS) expect(await stateBytes(host, binding, transactionId)).toBe(a2aBytes);
      }
    },
  );
});

describe('every invalid fixture over every binding and transport gets its $expect code', () => {
  it.each(listFixtures('invalid').map((f) => [f.name, f] as const))('%s', async (_name, fixture) => {
    const code = fixture.expect as AcpErrorCode;
    // The chain always arrives over TLS; an `$insecure` fixture then arrives at a cleartext host on the same store.
    const db = fixture.secure ? 'memory' : `sqlite:${tempDir('a2ac-acp-fx-')}/acp.sqlite`;
    const seeded = await hostFor(fixture, true, db);
    for (const given of givenChain(fixture))
      expect((await deliver(seeded, 'https', given.envelope)).code).toBeUndefined();
    const target = fixture.secure ? seeded : await hostFor(fixture, false, db);
    const overA2A = await deliver(target, 'a2a', fixture.envelope);
    const overGrpc = await deliver(target, 'a2a-grpc', fixture.envelope);
    const overHttps = await deliver(target, 'https', fixture.envelope);
    // A value JSON cannot carry exactly (e.g. an integer of 2^53 or more) never reaches a binding over A2A:
    // the A2A front refuses it as invalid params on every transport; over HTTPS the route says ACP_SCHEMA_INVALID.
    const a2aCode = checkJsonValue(fixture.envelope) === undefined ? code : 'A2A -32602';
    expect(overA2A.code).toBe(a2aCode);
    expect(overGrpc.code).toBe(a2aCode);
    expect(overHttps).toMatchObject({ code, status: ACP_ERRORS[code].httpStatus });
  });
});
