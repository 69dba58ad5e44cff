import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { invokeInputFromFlags } from '../../src/cli/acmp.js';
import { modulesFromFlags } from '../../src/cli/serve-modules.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { escrowModule } from '../../src/server/modules/escrow.js';
import { cleanup, startTestHost, tempDir } from '../helpers/host.js';
import { secret, TOKENS } from './helpers.js';

afterEach(cleanup);

function io(): CliIo & { out: (t: string) => void; lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (t) => lines.push(t), err: (t) => errors.push(t), env: {} };
}

/** Runs one CLI command and collects what it printed. */
async function run(args: string[]) {
  const out = io();
  const code = await runCli(args, out);
  return { code, text: out.lines.join('\n'), err: out.errors.join('\n') };
}

describe('a2a-commerce escrow (party verbs over A2A, operator verbs on the database)', () => {
  it('credits, locks, binds, releases, reads status and checks the ledger', async () => {
    const dataDir = tempDir();
    const host = await startTestHost({
      dataDir,
      modules: [escrowModule({ allowPlaintext: true })],
      flags: { token: Object.values(TOKENS) },
    });
    expect(
      (await run(['escrow', 'credit', '--data-dir', dataDir, '--account', 'agent:buyer', '--amount', '1']))
        .text,
    ).toMatch(/balance 1 CU/);
    const locked = await run([
      'escrow',
      'lock',
      host.url,
      '--amount',
      '0.01',
      '--valid-for-ms',
      '3600000',
      '--token',
      secret('buyer'),
      '--op-ref',
      'cli-lock',
    ]);
    expect(locked.code).toBe(0);
    const escrowId = (JSON.parse(locked.text) as { escrow_id: string }).escrow_id;
    expect(
      (
        await run([
          'escrow',
          'bind',
          host.url,
          escrowId,
          '--payee',
          'agent:provider',
          '--token',
          secret('buyer'),
        ])
      ).code,
    ).toBe(0);
    const released = await run([
      'escrow',
      'release',
      host.url,
      escrowId,
      '--amount',
      '0.004',
      '--payee',
      'agent:provider',
      '--token',
      secret('buyer'),
    ]);
    expect(JSON.parse(released.text)).toMatchObject({ released_cu: 0.004, remaining_cu: 0.006 });
    const refused = await run([
      'escrow',
      'claim',
      host.url,
      escrowId,
      '--amount',
      '0.001',
      '--task-id',
      't',
      '--proof',
      '{}',
      '--token',
      secret('mallory'),
    ]);
    expect(refused).toMatchObject({
      code: 1,
      err: expect.stringMatching(/-35005 \(not_authorized\)/) as unknown,
    });
    const status = await run(['escrow', 'status', host.url, escrowId, '--token', secret('provider')]);
    expect(JSON.parse(status.text)).toMatchObject({ state: 'open', released_cu: 0.004 });
    const ledger = await run(['escrow', 'ledger', '--data-dir', dataDir, '--account', 'agent:provider']);
    expect(ledger.text).toMatch(/agent:provider: 0.004 CU/);
    expect(ledger.text).toMatch(/credited 1 CU: conserved/);
  });

  it('credit --op-ref credits once: a repeat says nothing changed, another amount is refused (CONFLICT)', async () => {
    const dataDir = tempDir();
    const credit = (args: string[]) => run(['escrow', 'credit', '--data-dir', dataDir, ...args]);
    const deposit = ['--account', 'agent:buyer', '--amount', '2', '--op-ref', 'bank-0001'];
    expect(await credit(deposit)).toMatchObject({
      code: 0,
      text: 'credited agent:buyer under op-ref bank-0001: balance 2 CU',
    });
    expect(await credit(deposit)).toMatchObject({
      code: 0,
      text: 'already credited agent:buyer under op-ref bank-0001 (nothing changed): balance 2 CU',
    });
    const other = await credit(['--account', 'agent:buyer', '--amount', '3', '--op-ref', 'bank-0001']);
    expect(other.code).toBe(1);
    expect(other.err).toBe(
      'error (CONFLICT): reference bank-0001 was already used for a deposit of 2 CU to agent:buyer',
    );
    expect((await credit(['--account', 'agent:buyer', '--amount', '1', '--op-ref', ' '])).code).toBe(2);
    const ledger = io();
    expect(
      await runCli(['escrow', 'ledger', '--data-dir', dataDir, '--account', 'agent:buyer'], ledger),
    ).toBe(0);
    expect(ledger.lines.join('\n')).toMatch(/credited 2 CU: conserved/);
  });

  it('payout lists: the operator registers one from `wallet payout` output, a payee sends one with its claim; payouts land on the named account', async () => {
    const dataDir = tempDir();
    const host = await startTestHost({
      dataDir,
      modules: [escrowModule({ allowPlaintext: true })],
      flags: { token: Object.values(TOKENS) },
    });
    const file = (name: string, value: unknown) => {
      const path = join(dataDir, name);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    const party = (token: Parameters<typeof secret>[0]) => ['--token', secret(token)];
    await run(['escrow', 'credit', '--data-dir', dataDir, '--account', 'agent:buyer', '--amount', '1']);
    const lockBound = async () => {
      const locked = await run([
        'escrow',
        'lock',
        host.url,
        '--amount',
        '0.01',
        '--valid-for-ms',
        '3600000',
        '--payee',
        'agent:provider',
        ...party('buyer'),
      ]);
      return (JSON.parse(locked.text) as { escrow_id: string }).escrow_id;
    };
    const release = (id: string) =>
      run([
        'escrow',
        'release',
        host.url,
        id,
        '--amount',
        '0.002',
        '--payee',
        'agent:provider',
        ...party('buyer'),
      ]);
    // Out of band: the operator registers the payee's list (the form `wallet payout` prints).
    const savings = file('savings.json', { payout: [{ rail: 'credit-ledger', account: 'acct_savings' }] });
    expect(
      await run(['escrow', 'payout', 'agent:provider', '--data-dir', dataDir, '--file', savings]),
    ).toMatchObject({
      code: 0,
      text: expect.stringMatching(/registered the payout list of agent:provider/) as unknown,
    });
    expect(
      JSON.parse((await run(['escrow', 'payout', 'agent:provider', '--data-dir', dataDir])).text),
    ).toMatchObject({ payout: [{ account: 'acct_savings' }], set_by: 'operator' });
    const first = await lockBound();
    expect((await release(first)).code).toBe(0);
    // In band: the payee's claim carries a new list, which its next payout follows.
    const second = await lockBound();
    const spending = file('spending.json', [
      { rail: 'x402', network: 'base' },
      { rail: 'credit-ledger', account: 'acct_spending' },
    ]);
    const claim = await run([
      'escrow',
      'claim',
      host.url,
      second,
      '--amount',
      '0.002',
      '--task-id',
      't',
      '--proof',
      '{}',
      '--payout',
      spending,
      ...party('provider'),
    ]);
    expect(claim.code).toBe(0);
    expect((await release(second)).code).toBe(0);
    const status = await run(['escrow', 'status', host.url, second, ...party('provider')]);
    expect(JSON.parse(status.text)).toMatchObject({
      payee_payout: { rail: 'credit-ledger', account: 'acct_spending', source: 'configured' },
    });
    const buyerView = JSON.parse(
      (await run(['escrow', 'status', host.url, second, ...party('buyer')])).text,
    ) as { payee_payout: object };
    expect(buyerView.payee_payout).toEqual({ rail: 'credit-ledger', source: 'configured' });
    for (const [account, cu] of [
      ['acct_savings', '0.002'],
      ['acct_spending', '0.002'],
      ['agent:provider', '0'],
    ])
      expect((await run(['escrow', 'ledger', '--data-dir', dataDir, '--account', account!])).text).toMatch(
        new RegExp(`${account}: ${cu} CU[\\s\\S]*conserved`),
      );
    expect(
      (
        await run([
          'escrow',
          'payout',
          'agent:provider',
          '--data-dir',
          dataDir,
          '--file',
          file('bad.json', { payout: [] }),
        ])
      ).code,
    ).toBe(2);
  });

  it('acmp invoke --escrow-id puts the escrow into the invoke params', () => {
    expect(
      invokeInputFromFlags({ capability: 'c', input: 'x', 'max-price': '0.005', 'escrow-id': 'esc_1' }),
    ).toMatchObject({ escrow_id: 'esc_1', max_price_cu: 0.005 });
  });

  it('serve flags select the escrow module first, and the provider’s escrow agent', () => {
    const config = resolveHostConfig({ 'no-tls': true, 'data-dir': tempDir() }, {});
    expect(modulesFromFlags({ escrow: true }, config, {}).map((m) => m.name)).toEqual([
      'escrow',
      'acmp',
      'acpspec',
    ]);
    expect(modulesFromFlags({ modules: 'escrow' }, config, {}).map((m) => m.name)).toEqual(['escrow']);
    expect(() => modulesFromFlags({ modules: 'nope' }, config, {})).toThrow(/unknown module/);
    expect(() => modulesFromFlags({ 'escrow-agent': 'https://escrow.example' }, config, {})).toThrow(
      /go together/,
    );
    const withAgent = modulesFromFlags(
      { 'escrow-agent': 'https://escrow.example', 'escrow-payee': 'agent:provider' },
      config,
      { A2AC_ESCROW_TOKEN: 'x' },
    );
    expect(withAgent.find((m) => m.name === 'acmp')?.migrations?.map((s) => s.id)).toEqual([
      'acmp',
      'acmp_escrow',
    ]); // --escrow-payout reads `wallet payout` output; a file without a valid list stops serve (usage error).
    const dir = tempDir();
    const agentFlags = { 'escrow-agent': 'https://escrow.example', 'escrow-payee': 'agent:provider' };
    writeFileSync(
      join(dir, 'ok.json'),
      JSON.stringify({ payout: [{ rail: 'credit-ledger', account: 'a' }] }),
    );
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ payout: [{ rail: 'credit-ledger' }] }));
    expect(
      modulesFromFlags({ ...agentFlags, 'escrow-payout': join(dir, 'ok.json') }, config, {}).length,
    ).toBe(2);
    expect(() =>
      modulesFromFlags({ ...agentFlags, 'escrow-payout': join(dir, 'bad.json') }, config, {}),
    ).toThrow(/expected \{"payout"/);
  });
});
