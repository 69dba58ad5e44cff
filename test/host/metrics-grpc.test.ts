import * as grpc from '@grpc/grpc-js';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

const ALICE = 'alice-secret-0123456789abcdef';
const RawA2A = grpc.makeGenericClientConstructor(A2AService, 'A2AService');

type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, response: unknown) => void,
) => void;

/** One raw unary call; resolves with the status code it ended with. */
function unaryCode(client: grpc.Client, method: string, request: unknown, token?: string): Promise<number> {
  const metadata = new grpc.Metadata();
  metadata.set('a2a-version', '1.0');
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const call = (client as unknown as Record<string, Unary>)[method]!.bind(client);
  return new Promise((resolve) => call(request, metadata, (error) => resolve(error ? error.code : 0)));
}

describe('gRPC calls in /metrics (docs/operations.md "Metrics")', () => {
  it('counts each call by method and outcome, refusals before the handler included', async () => {
    const host = await startTestHost({ flags: { 'grpc-port': '0', token: [`alice=${ALICE}`] } });
    const client = new RawA2A(host.grpcUrl!, grpc.credentials.createInsecure());
    expect(await unaryCode(client, 'getTask', { tenant: '', id: 'missing' })).toBe(
      grpc.status.UNAUTHENTICATED,
    );
    expect(await unaryCode(client, 'getTask', { tenant: '', id: 'missing' }, ALICE)).toBe(
      grpc.status.NOT_FOUND,
    );
    expect(await unaryCode(client, 'getTask', { tenant: '', id: 'missing' }, ALICE)).toBe(
      grpc.status.NOT_FOUND,
    );
    client.close();

    const text = await (await fetch(`${host.url}/metrics`)).text();
    const samples = text.split('\n').filter((l) => l.includes('binding="grpc"'));
    expect(samples.sort()).toEqual([
      'a2a_commerce_requests_total{binding="grpc",method="getTask",outcome="client_error"} 2',
      'a2a_commerce_requests_total{binding="grpc",method="getTask",outcome="unauthenticated"} 1',
    ]);
  });
});
