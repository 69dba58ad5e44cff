import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@a2a-js/sdk/client';
import { createAcmpBuyer } from '../../src/a2a/acmp/buyer.js';
import { createAcpClient } from '../../src/a2a/acp/client.js';
import { createA2AClient, fetchAgentCard } from '../../src/a2a/client.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import type { HostFlags } from '../../src/server/config.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { codeOf, freshSnapshot, RECEIVER, txId } from '../acpspec/helpers.js';
import { newTaskId } from '../acmp/helpers.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { freshPgDatabase } from '../helpers/pg.js';

afterEach(cleanup);

const ALICE = 'alice-secret-0123456789abcdef';
const BOB = 'bobby-secret-0123456789abcdef';

/** Where a test host is and the certificate to trust. */
interface At {
  url: string;
  caCert: string;
}

/** A host with both bindings over self-signed TLS (ACPspec carries personal data). */
async function startHost(
  flags: HostFlags,
  options: { dataDir?: string; migrate?: boolean } = {},
): Promise<At & { close(): Promise<void> }> {
  const modules = [
    acmpModule({ capabilities: demoCapabilities() }),
    acpModule({ producer: { ...RECEIVER } }),
  ];
  const host = await startTestHost({ flags: { 'tls-self-signed': true, ...flags }, modules, ...options });
  return { url: host.url, caCert: host.tls!.cert, close: () => host.close() };
}

/** What `token` creates on `url`: one ACPspec transaction and one ACMP task. */
async function createData(
  { url, caCert }: At,
  token: string,
): Promise<{ transactionId: string; taskId: string }> {
  const transactionId = txId('mine');
  await (await createAcpClient({ agentUrl: url, caCert, token })).send(freshSnapshot(transactionId));
  const taskId = newTaskId();
  const buyer = await createAcmpBuyer({ agentUrl: url, caCert, token });
  await buyer.invoke({
    task_id: taskId,
    capability: 'sentiment-analysis',
    input: { type: 'text', data: 'Fine.' },
    max_price_cu: 0.005,
  });
  return { transactionId, taskId };
}

async function listedTaskIds(client: Client): Promise<string[]> {
  const page = await client.listTasks({
    tenant: '',
    contextId: '',
    status: 0,
    pageSize: 100,
    pageToken: '',
    historyLength: 0,
    statusTimestampAfter: undefined,
    includeArtifacts: false,
  });
  return page.tasks.map((t) => t.id);
}

/** What another agent sees of `data` through `url`. */
async function sightOf({ url, caCert }: At, token: string, data: { transactionId: string; taskId: string }) {
  const acp = await createAcpClient({ agentUrl: url, caCert, token });
  const a2a = await createA2AClient(await fetchAgentCard(url, { caCert }), { caCert, token });
  return {
    state: await codeOf(acp.requestState(data.transactionId).then((s) => s.transaction_id)),
    listed: (await listedTaskIds(a2a)).includes(data.taskId),
    task: await codeOf(a2a.getTask({ tenant: '', id: data.taskId, historyLength: 0 }).then((t) => t.id)),
  };
}

describe('identity comes from the credential, never its position', () => {
  it("a revoked token's data is not inherited by the token that moves into its place after a restart", async () => {
    const dataDir = tempDir();
    const first = await startHost({ token: [ALICE, BOB] }, { dataDir });
    const alices = await createData(first, ALICE);
    await first.close();

    const second = await startHost({ token: [BOB] }, { dataDir });
    const seen = await sightOf(second, BOB, alices);
    expect(seen.state).toBe('ACP_TRANSACTION_UNKNOWN');
    expect(seen.listed).toBe(false);
    expect(seen.task).not.toBe(alices.taskId);
  });

  it('a named token keeps its data across restarts whatever the order of the tokens', async () => {
    const dataDir = tempDir();
    const first = await startHost({ token: [`alice=${ALICE}`, `bob=${BOB}`] }, { dataDir });
    const alices = await createData(first, ALICE);
    await first.close();

    const second = await startHost({ token: [`bob=${BOB}`, `alice=${ALICE}`] }, { dataDir });
    expect(await sightOf(second, ALICE, alices)).toEqual({
      state: alices.transactionId,
      listed: true,
      task: alices.taskId,
    });
    expect(await sightOf(second, BOB, alices)).toMatchObject({
      state: 'ACP_TRANSACTION_UNKNOWN',
      listed: false,
    });
  });
});

describe.skipIf(!process.env.TEST_PG_URL)('identity across hosts on one PostgreSQL', () => {
  it('two hosts listing the same tokens in a different order agree on who owns what', async () => {
    const db = await freshPgDatabase();
    const a = await startHost({ db, token: [ALICE, BOB] }, { migrate: true });
    const b = await startHost({ db, token: [BOB, ALICE] });
    const alices = await createData(a, ALICE);

    expect(await sightOf(b, BOB, alices)).toMatchObject({ state: 'ACP_TRANSACTION_UNKNOWN', listed: false });
    expect(await sightOf(b, ALICE, alices)).toEqual({
      state: alices.transactionId,
      listed: true,
      task: alices.taskId,
    });
  });
});
