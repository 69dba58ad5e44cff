import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

describe('npm run demo (a2a-commerce demo)', () => {
  it('runs every scenario against a real host on SQLite with self-signed TLS and exits 0', async () => {
    const out: string[] = [];
    const io: CliIo = { out: (t) => out.push(t), err: () => {}, env: {} };
    expect(await runCli(['demo'], io)).toBe(0);
    const transcript = out.join('\n');
    expect(transcript).toMatch(/demo finished: 9 scenarios passed/);
    expect(transcript).not.toMatch(/FAILED/);
    expect(transcript).toMatch(/acmp_error -33004 cancelled/);
    expect(transcript).toMatch(/over mcp: sentiment-analysis/);
    expect(transcript).toMatch(/replays the MCP purchase/);
    expect(transcript).toMatch(/invoke with referenceTaskIds \[neg_\w+\] → 0\.0009 CU, proof verified/);
    // Layer 2: three providers, the summary streamed, the A2A downstreams on the §5 fallback.
    expect(transcript).toMatch(/summary streamed \d+ chunks \(seq 0, 1/);
    expect(transcript).toMatch(/edge summary → digest: literal input \(downstream_no_input_streaming\)/);
    expect(transcript).toMatch(/→ sentiment \{"sentiment":"positive".*run completed: 3 nodes/s);
    expect(transcript).toMatch(/balances before: buyer 1 CU, provider 0 CU/);
    expect(transcript).toMatch(/auto-released/);
    expect(transcript).toMatch(/for 5000 tokens → not accepted: spend denied by the wallet: per_task_max_cu/);
    expect(transcript).toMatch(/purchases, then refused: spend denied by the wallet: rate_cu_per_hour/);
    // Layer 7: a signed offer, the tampered one refused, the challenge, the signed claim kept as evidence.
    expect(transcript).toMatch(/offer [\d.]+ CU, sig\.did did:key:z6Mk\w+…\w+ EdDSA: verified/);
    expect(transcript).toMatch(/halves price_cu → refused: -36003 Signature invalid \(check payload_hash\)/);
    expect(transcript).toMatch(/acmp\/proveIdentity with a fresh nonce → did:key:z6Mk\w+…\w+ proved/);
    expect(transcript).toMatch(/acmp\/escrowClaim [\d.]+ CU accepted/);
    expect(transcript).toMatch(
      /escrowStatus claim\.sig: did did:key:z6Mk\w+…\w+, EdDSA, payload_hash sha256:[0-9a-f]{12}…; the claim kept verifies/,
    );
  }, 60_000);
});
