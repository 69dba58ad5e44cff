import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { modulesFromFlags } from '../../src/cli/serve-modules.js';
import type { EscrowSettings } from '../../src/acmp/escrow/constants.js';
import { resolveHostConfig } from '../../src/server/config.js';
import { escrowModule } from '../../src/server/modules/escrow.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { escrowHost } from './helpers.js';

afterEach(cleanup);

function refusalOf(make: () => unknown): { code?: unknown; message?: unknown } | undefined {
  try {
    make();
  } catch (error) {
    return error as { code?: unknown; message?: unknown };
  }
  return undefined;
}

describe('escrow settings are checked against the range the agent advertises (docs/acmp-escrow.md §2)', () => {
  it.each<[string, Partial<EscrowSettings>]>([
    ['a default window below the minimum', { defaultChallengeWindowMs: 3_000 }],
    ['a default window above the maximum', { defaultChallengeWindowMs: 8 * 24 * 3_600_000 }],
    ['a minimum above the maximum', { minChallengeWindowMs: 10_000, maxChallengeWindowMs: 5_000 }],
    ['a negative minimum', { minChallengeWindowMs: -1 }],
    ['a fractional window', { defaultChallengeWindowMs: 60_000.5 }],
    ['a dispute deadline of zero', { disputeDeadlineMs: 0 }],
    ['a dispute deadline beyond exact integers', { disputeDeadlineMs: 2 ** 53 }],
    ['an unknown dispute outcome', { defaultOutcome: 'coin_flip' as EscrowSettings['defaultOutcome'] }],
  ])('refuses %s at start-up with CONFIG_INVALID', (_, settings) => {
    expect(refusalOf(() => escrowModule({ settings }))).toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('refuses --escrow-window-ms below the advertised minimum, naming the range', () => {
    const config = resolveHostConfig({ 'no-tls': true, 'data-dir': tempDir() }, {});
    const refused = refusalOf(() =>
      modulesFromFlags({ escrow: true, 'escrow-window-ms': '3000' }, config, {}),
    );
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(String(refused?.message)).toMatch(/3000 ms.*\[60000, 604800000\]/);
  });

  it('a2a-commerce serve stops before listening with the CONFIG_INVALID line (exit 1)', async () => {
    const errors: string[] = [];
    const io: CliIo = { out: () => {}, err: (t) => errors.push(t), env: {} };
    const args = ['serve', '--escrow', '--escrow-window-ms', '3000', '--no-tls', '--port', '0'];
    const code = await runCli([...args, '--data-dir', tempDir()], io);
    expect({ code, errors }).toMatchObject({
      code: 1,
      errors: [expect.stringMatching(/^error \(CONFIG_INVALID\): .*challenge window/) as string],
    });
  });

  it('a default inside the range is advertised as configured', async () => {
    const { host } = await escrowHost({ module: { settings: { defaultChallengeWindowMs: 120_000 } } });
    const card = (await (await fetch(`${host.url}/.well-known/agent-card.json`)).json()) as {
      capabilities: { extensions: { params?: { challenge_window_ms?: unknown } }[] };
    };
    const windows = card.capabilities.extensions.map((e) => e.params?.challenge_window_ms).filter(Boolean);
    expect(windows).toEqual([{ default: 120_000, min: 60_000, max: 7 * 24 * 3_600_000 }]);
  });
});
