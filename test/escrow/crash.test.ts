import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createEscrowClient } from '../../src/a2a/escrow/client.js';
import { ESCROW_METHOD as M } from '../../src/acmp/escrow/constants.js';
import { openDatabase } from '../../src/storage/sql/database.js';
import { KyselyEscrowStore } from '../../src/storage/escrow/escrow-store-kysely.js';
import { cleanup, onCleanup, tempDir } from '../helpers/host.js';
import { secret, TOKENS } from './helpers.js';

afterEach(cleanup);

const SCRIPT = fileURLToPath(new URL('./fixtures/escrow-process.ts', import.meta.url));

/** Starts the agent process; resolves with its URL and a promise of its exit signal. */
async function startAgent(
  dataDir: string,
  crash: boolean,
): Promise<{ url: string; exited: Promise<string | null> }> {
  const env = {
    ...process.env,
    A2AC_TOKENS: Object.values(TOKENS).join(','),
    A2AC_TEST_CRASH_BEFORE_PAYOUT: crash ? '1' : '0',
  };
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env,
  });
  onCleanup(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
  const exited = new Promise<string | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /listening (\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error('agent exited before listening')));
  });
  return { url, exited };
}

describe('E19: a crash between a transition and its payout (L4 §6, §7.1)', () => {
  it('pays exactly once after the restart, and a retry of the operation replays without paying again', async () => {
    const dataDir = tempDir();
    const database = openDatabase({ dataDir });
    onCleanup(() => database.close());
    const ledger = new KyselyEscrowStore(database);

    const first = await startAgent(dataDir, true);
    await ledger.credit('', 'agent:buyer', 1_000_000_000n);
    const buyer = await createEscrowClient({ agentUrl: first.url, token: secret('buyer') });
    const escrowId = (
      await buyer.call(M.lock, {
        op_ref: 'l',
        amount_cu: 0.01,
        valid_until_ms: Date.now() + 3_600_000,
        payee_id: 'agent:provider',
      })
    ).escrow_id as string;
    const release = {
      op_ref: 'pay-once',
      escrow_id: escrowId,
      amount_cu: 0.004,
      payee_id: 'agent:provider',
      task_id: 'task_1',
    };
    await expect(buyer.call(M.release, release)).rejects.toBeDefined();
    expect(await first.exited).toBe('SIGKILL');

    // The transition is durable, its payout pending: nobody has been paid yet, and no value was lost.
    expect(await ledger.balance('', 'agent:provider')).toBe(0n);
    const mid = await ledger.totals();
    expect(mid.pending).toBe(4_000_000n);
    expect(mid.balances + mid.remaining + mid.pending).toBe(mid.credits);

    const second = await startAgent(dataDir, false);
    expect(await ledger.balance('', 'agent:provider')).toBe(4_000_000n);
    const again = await createEscrowClient({ agentUrl: second.url, token: secret('buyer') });
    expect(await again.call(M.release, release)).toMatchObject({ released_cu: 0.004, remaining_cu: 0.006 });
    expect(await ledger.balance('', 'agent:provider')).toBe(4_000_000n);
    const end = await ledger.totals();
    expect(end.pending).toBe(0n);
    expect(end.balances + end.remaining).toBe(end.credits);
  });
});
