import { afterEach, describe, expect, it } from 'vitest';
import { acpspecScenario } from '../../src/cli/demo/acpspec.js';
import { DEMO_SCENARIOS } from '../../src/cli/demo/scenarios.js';
import { DEFAULT_ACP_PRODUCER } from '../../src/cli/host-modules.js';
import { acpModule } from '../../src/server/modules/acpspec.js';
import { cleanup, startTestHost } from '../helpers/host.js';

afterEach(cleanup);

describe('demo: the dealership scenario (issue "CLI and demo")', () => {
  it('is part of npm run demo', () => {
    expect(DEMO_SCENARIOS).toContain(acpspecScenario);
  });

  it('runs against a host and prints identical sha256 sums for both bindings', async () => {
    const host = await startTestHost({
      flags: { 'tls-self-signed': true },
      modules: [acpModule({ producer: { ...DEFAULT_ACP_PRODUCER } })],
    });
    const lines: string[] = [];
    await acpspecScenario.run({
      url: host.url,
      caCert: host.tls?.cert,
      dataDir: host.config.dataDir,
      say: (line) => lines.push(line),
    });
    const transcript = lines.join('\n');
    expect(transcript).toContain('ACP_PARENT_UNKNOWN');
    expect(transcript).toContain('consent.conflict');
    const sums = [...transcript.matchAll(/sha256 ([0-9a-f]{64})/g)].map((m) => m[1]);
    expect(sums).toHaveLength(2);
    expect(sums[0]).toBe(sums[1]);
  });
});
