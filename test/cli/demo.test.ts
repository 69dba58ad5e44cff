import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

describe('npm run demo (a2a-commerce demo)', () => {
  it('runs every scenario against a real host on SQLite with self-signed TLS and exits 0', async () => {
    const out: string[] = [];
    const io: CliIo = { out: (t) => out.push(t), err: () => {}, env: {} };
    expect(await runCli(['demo'], io)).toBe(0);
    const transcript = out.join('\n');
    expect(transcript).toMatch(/demo finished: 6 scenarios passed/);
    expect(transcript).not.toMatch(/FAILED/);
    expect(transcript).toMatch(/acmp_error -33004 cancelled/);
    expect(transcript).toMatch(/over mcp: sentiment-analysis/);
    expect(transcript).toMatch(/replays the MCP purchase/);
    expect(transcript).toMatch(/invoke with referenceTaskIds \[neg_\w+\] → 0\.0009 CU, proof verified/);
    expect(transcript).toMatch(/balances before: buyer 1 CU, provider 0 CU/);
    expect(transcript).toMatch(/auto-released/);
  }, 60_000);
});
