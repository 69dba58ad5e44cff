import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { sinceOf } from '../../src/cli/wallet.js';
import { demoCapabilities } from '../../src/demo/capabilities.js';
import { acmpModule } from '../../src/server/modules/acmp.js';
import { escrowHost, secret } from '../escrow/helpers.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';

afterEach(cleanup);

async function run(args: string[], env: Record<string, string> = {}) {
  const lines: string[] = [];
  const errors: string[] = [];
  const io: CliIo = { out: (t) => lines.push(t), err: (t) => errors.push(t), env };
  const code = await runCli(args, io);
  return { code, text: lines.join('\n'), lines, err: errors.join('\n') };
}

function limitsFile(limits: Record<string, unknown>): string {
  const path = join(tempDir(), 'limits.json');
  writeFileSync(path, JSON.stringify({ wallet_id: 'cli', limits }));
  chmodSync(path, 0o600);
  return path;
}

describe('a2a-commerce wallet and the buyer verbs with --wallet-limits (docs/acmp-wallet.md)', () => {
  it('escrow lock spends through the wallet; log and status show it; a lock over the cap is refused', async () => {
    const escrow = await escrowHost();
    await escrow.credit('agent:buyer', '1');
    const file = limitsFile({ total_cap_cu: 0.5, rate_cu_per_hour: 0.5 });
    const env = { A2AC_WALLET_LIMITS: file, A2AC_TOKEN: secret('buyer') };
    const lock = (amount: string) =>
      run(['escrow', 'lock', escrow.host.url, '--amount', amount, '--valid-for-ms', '3600000'], env);
    const locked = await lock('0.3');
    expect(locked.code).toBe(0);
    const escrowId = (JSON.parse(locked.text) as { escrow_id: string }).escrow_id;
    const refused = await lock('0.3');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/total_cap_cu is 0.5 CU, 0.3 used, 0.3 requested/);
    expect(await escrow.ledger.balance('', 'agent:buyer')).toBe(700_000_000n);

    const log = await run(['wallet', 'log', '--json'], env);
    expect(log.lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toMatchObject([
      { kind: 'lock', amount_cu: 0.3, escrow_id: escrowId, outcome: 'ok' },
      { kind: 'denied', amount_cu: 0.3, outcome: 'denied:total_cap_cu,rate_cu_per_hour' },
    ]);
    expect((await run(['wallet', 'log', '--kind', 'denied'], env)).lines).toHaveLength(1);
    expect((await run(['wallet', 'log', '--since', '1d', '--counterparty', 'nobody'], env)).lines).toEqual(
      [],
    );

    const status = JSON.parse((await run(['wallet', 'status', '--json'], env)).text) as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({
      wallet_id: 'cli',
      headroom: {
        wallet: {
          total_cap_cu: { spent_cu: 0.3, limit_cu: 0.5, remaining_cu: 0.2 },
          rate_cu_per_hour: { spent_cu: 0.3, remaining_cu: 0.2 },
        },
      },
      escrows: [{ escrow_id: escrowId, funded_cu: 0.3, remaining_cu: 0.3 }],
      pending_operations: 0,
    });
  });

  it('acmp invoke is refused before it is sent when its ceiling exceeds the per-task maximum', async () => {
    const provider = await startTestHost({
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }) })],
    });
    const file = limitsFile({ per_task_max_cu: 0.001 });
    const invoke = (max: string) =>
      run([
        'acmp',
        'invoke',
        provider.url,
        '--capability',
        'sentiment-analysis',
        '--input',
        'Good.',
        '--max-price',
        max,
        '--wallet-limits',
        file,
      ]);
    const refused = await invoke('0.01');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/per_task_max_cu is 0.001 CU/);
    const log = (await run(['wallet', 'log', '--wallet-limits', file])).lines;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/denied .* 0.01 CU {2}denied:per_task_max_cu/);
  });

  it('acmp negotiate does not accept an offer above the per-task maximum', async () => {
    const provider = await startTestHost({
      modules: [acmpModule({ capabilities: demoCapabilities({ stepMs: 1 }), negotiation: true })],
    });
    const file = limitsFile({ per_task_max_cu: 0.001 });
    const refused = await run([
      'acmp',
      'negotiate',
      provider.url,
      '--capability',
      'sentiment-analysis',
      '--max-price',
      '1',
      '--input',
      'Good.',
      '--wallet-limits',
      file,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/per_task_max_cu is 0.001 CU/);
    expect((await run(['wallet', 'log', '--wallet-limits', file, '--kind', 'denied'])).lines).toHaveLength(1);
  });

  it('wallet payout prints the rails to register with an escrow agent', async () => {
    const path = join(tempDir(), 'limits.json');
    const payout = [{ rail: 'credit-ledger', account: 'acct_1' }];
    writeFileSync(path, JSON.stringify({ wallet_id: 'p', limits: {}, payout }));
    chmodSync(path, 0o600);
    const printed = await run(['wallet', 'payout', '--wallet-limits', path]);
    expect(JSON.parse(printed.text)).toEqual({ payout });
  });

  it('wallet without a file is a usage error; --since reads ISO times and durations', async () => {
    expect((await run(['wallet', 'log'])).code).toBe(2);
    expect(sinceOf('2h', 10_000_000)).toBe(10_000_000 - 7_200_000);
    expect(sinceOf('2026-07-01T00:00:00Z', 0)).toBe(Date.UTC(2026, 6, 1));
    expect(() => sinceOf('yesterday', 0)).toThrow(/ISO time/);
  });
});
