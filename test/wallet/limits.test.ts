import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryWalletStore } from '../../src/storage/memory/wallet-store-memory.js';
import { loadWalletConfig, parseWalletConfig, type LimitSet } from '../../src/wallet/limits.js';
import { Wallet } from '../../src/wallet/wallet.js';

const file = (json: unknown, mode = 0o600): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'a2ac-wallet-')), 'limits.json');
  writeFileSync(path, JSON.stringify(json));
  chmodSync(path, mode);
  return path;
};

describe('the operator’s limits file (Layer 7 §1 item 2)', () => {
  it('reads exact nano-CU limits and the store next to the file by default', () => {
    const path = file({ wallet_id: 'w', limits: { total_cap_cu: 0.3, per_task_max_cu: 0.000000001 } });
    const config = loadWalletConfig(path);
    expect(config.limits).toEqual({ capPeriod: 'lifetime', totalCap: 300_000_000n, perTaskMax: 1n });
    expect(config.store).toBe(`sqlite:${join(path, '..', 'w.wallet.sqlite')}`);
  });

  it('refuses a file that group or others can write', () => {
    const path = file({ wallet_id: 'w', limits: {} }, 0o620);
    expect(() => loadWalletConfig(path)).toThrow(/writable by group or others: chmod go-w/);
    expect(() => loadWalletConfig(file({ wallet_id: 'w', limits: {} }, 0o644))).not.toThrow();
  });

  it('refuses a misspelt limit, a negative one and one finer than a nano-CU', () => {
    const parse = (limits: unknown) => () => parseWalletConfig({ wallet_id: 'w', limits }, 'f');
    expect(parse({ per_task_cu: 1 })).toThrow(/limits/);
    expect(parse({ total_cap_cu: -1 })).toThrow(/total_cap_cu/);
    expect(parse({ rate_cu_per_hour: 0.0000000001 })).toThrow(/precision/);
  });
});

describe('code holding the wallet cannot raise its limits (Layer 7 §1, §6.2 MUST NOT)', () => {
  const json = {
    wallet_id: 'w',
    limits: { total_cap_cu: 1 },
    counterparties: { 'agent:p': { total_cap_cu: 1 } },
  };

  it('has frozen limits, a frozen counterparty map and no setter', () => {
    const wallet = new Wallet(parseWalletConfig(json, 'f'), new MemoryWalletStore());
    const limits = wallet.config.limits as { totalCap?: bigint };
    expect(() => (limits.totalCap = 100n)).toThrow(TypeError);
    expect(() => ((wallet.config as { limits: unknown }).limits = {})).toThrow(TypeError);
    expect(() => ((wallet as unknown as { config: unknown }).config = {})).toThrow(TypeError);
    const map = wallet.config.counterparties as Map<string, LimitSet>;
    expect(() => map.set('agent:p', { capPeriod: 'lifetime' })).toThrow(TypeError);
    expect(() => map.delete('agent:p')).toThrow(TypeError);
    expect(() => Object.assign(wallet, { authorize: () => Promise.resolve() })).toThrow(TypeError);
    expect(wallet.config.limits.totalCap).toBe(1_000_000_000n);
  });

  it('ignores a change to the configuration object it was made from', async () => {
    const config = {
      ...parseWalletConfig(json, 'f'),
      limits: { capPeriod: 'lifetime' as const, totalCap: 1n },
    };
    const wallet = new Wallet(config, new MemoryWalletStore());
    config.limits.totalCap = 10n ** 15n;
    await expect(
      wallet.authorize({ amount_cu: 0.000000002, counterparty: 'x', kind: 'lock' }),
    ).rejects.toMatchObject({ code: 'SPEND_DENIED' });
  });

  it('offers no method that changes a limit', () => {
    const methods = Object.getOwnPropertyNames(Wallet.prototype);
    expect(methods.filter((m) => /[Ll]imit|[Cc]onfig|[Rr]aise|^set[A-Z]/.test(m))).toEqual(['config']);
  });
});

describe('payout configuration (Layer 7 §6.4)', () => {
  const payout = [
    { rail: 'credit-ledger', account: 'acct_7f21c0' },
    { rail: 'x402', network: 'base', asset: 'USDC', address: '0x9a1f', extra: { memo: 'm' } },
  ];

  it('reads the rails in order of preference, frozen to the last nested field', () => {
    const config = parseWalletConfig({ wallet_id: 'w', limits: {}, payout }, 'f');
    expect(config.payout).toEqual(payout);
    const x402 = config.payout[1] as unknown as { extra: { memo: string } };
    expect(() => (x402.extra.memo = 'changed')).toThrow(TypeError);
    expect(() => (config.payout as unknown[]).push({ rail: 'credit-ledger', account: 'a' })).toThrow(
      TypeError,
    );
    expect(new Wallet(config, new MemoryWalletStore()).config.payout).toEqual(payout);
  });

  it('refuses a list of blockchain rails only, and a credit-ledger entry without an account', () => {
    const parse = (p: unknown) => () => parseWalletConfig({ wallet_id: 'w', limits: {}, payout: p }, 'f');
    expect(parse([payout[1]])).toThrow(/at least one rail must not be a blockchain rail/);
    expect(parse([{ rail: 'credit-ledger' }])).toThrow(/payout/);
    expect(parse([])).not.toThrow();
  });
});
