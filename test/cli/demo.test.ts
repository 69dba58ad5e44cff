import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

describe('npm run demo (a2a-commerce demo)', () => {
  it('runs every scenario against a real host on SQLite with self-signed TLS and exits 0', async () => {
    const out: string[] = [];
    const io: CliIo = { out: (t) => out.push(t), err: () => {}, env: {} };
    expect(await runCli(['demo'], io)).toBe(0);
    const transcript = out.join('\n');
    expect(transcript).toMatch(/demo finished: 4 scenarios passed/);
    expect(transcript).not.toMatch(/FAILED/);
    expect(transcript).toMatch(/acmp_error -33004 cancelled/);
    expect(transcript).toMatch(/invoke with referenceTaskIds \[neg_\w+\] → 0\.0009 CU, proof verified/);
  }, 60_000);
});
