import { afterEach, describe, expect, it } from 'vitest';
import { createProgressLine, describeProgress } from '../../src/cli/acmp-progress.js';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import type { Payload } from '../../src/acmp/wire/task-messages.js';
import { resultHash } from '../../src/acmp/wire/proof.js';
import { cleanup, shared } from '../helpers/cleanup.js';
import { acmpHost } from './helpers.js';

afterEach(cleanup);

// The CLI only talks to the host (reading its card, invokes with fresh task ids), so the tests of a plain
// host share one per file; the TLS host and the host with a token serve one test each.
const plainHost = shared(() => acmpHost());

function capture(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env, stdout, stderr };
}

const TOKEN = 'cli-acmp-token-0123456789';

describe('a2a-commerce acmp capabilities', () => {
  it('prints the capability object and one skill per capability', async () => {
    const host = plainHost();
    const io = capture();
    expect(await runCli(['acmp', 'capabilities', host.url], io)).toBe(0);
    const out = io.stdout.join('\n');
    expect(out).toMatch(/"heartbeat_interval_ms": 1000\b/);
    expect(out).toMatch(/sentiment-analysis/);
    expect(out).toMatch(/slow-count/);
  });

  it('prints JSON with --json, trusting the data dir certificate over TLS', async () => {
    const host = await acmpHost({ flags: { 'tls-self-signed': true } });
    const io = capture();
    expect(
      await runCli(['acmp', 'capabilities', host.url, '--data-dir', host.config.dataDir, '--json'], io),
    ).toBe(0);
    const parsed = JSON.parse(io.stdout.join('\n')) as {
      capability: { role: string };
      skills: { id: string }[];
    };
    expect(parsed.capability.role).toBe('provider');
    expect(parsed.skills.map((s) => s.id)).toEqual(['sentiment-analysis', 'summarize', 'slow-count']);
  });
});

describe('a2a-commerce acmp invoke', () => {
  it('prints the result JSON and verifies the proof', async () => {
    const host = plainHost();
    const io = capture();
    const code = await runCli(
      [
        'acmp',
        'invoke',
        host.url,
        '--capability',
        'sentiment-analysis',
        '--input',
        'Revenue grew 12% YoY.',
        '--max-price',
        '0.005',
        '--proof',
        'result-hash',
      ],
      io,
    );
    expect(code).toBe(0);
    const result = JSON.parse(io.stdout.join('\n')) as {
      output: Payload;
      proof: { hash: string };
      cost_cu: number;
    };
    expect(result.output).toMatchObject({ data: { sentiment: 'positive' } });
    expect(result.cost_cu).toBeLessThanOrEqual(0.005);
    expect(io.stderr.join('\n')).toContain(`proof result-hash verified: ${resultHash(result.output)}`);
  });

  it('streams with --stream, reporting progress lines from chunks, and prints the reassembled output', async () => {
    const host = plainHost();
    const io = capture();
    const text = 'Profit rose. The office moved. Sales improved strongly. Nothing else.';
    const code = await runCli(
      [
        'acmp',
        'invoke',
        host.url,
        '--capability',
        'summarize',
        '--input',
        text,
        '--max-price',
        '1',
        '--stream',
        '--proof',
        'result-hash',
      ],
      io,
    );
    expect(code).toBe(0);
    expect(io.stderr.filter((l) => /^progress: .* chunk\(s\)/.test(l)).length).toBeGreaterThan(0);
    const result = JSON.parse(io.stdout.join('\n')) as { output_streamed: boolean; output: { type: string } };
    expect(result.output_streamed).toBe(true);
    expect(result.output.type).toBe('text');
  });

  it('reports heartbeat progress for a JSON input (slow-count)', async () => {
    const host = plainHost();
    const io = capture();
    const code = await runCli(
      [
        'acmp',
        'invoke',
        host.url,
        '--capability',
        'slow-count',
        '--input',
        '{"n":3}',
        '--input-type',
        'json',
        '--max-price',
        '1',
      ],
      io,
    );
    expect(code).toBe(0);
    expect(io.stderr).toContain(
      `progress: ${(JSON.parse(io.stdout.join('\n')) as { task_id: string }).task_id} 100% counted 3 of 3`,
    );
  });

  it('exits 1 with the ACMP code on a budget rejection', async () => {
    const host = plainHost();
    const io = capture();
    const code = await runCli(
      [
        'acmp',
        'invoke',
        host.url,
        '--capability',
        'sentiment-analysis',
        '--input',
        'x',
        '--max-price',
        '0.0000001',
      ],
      io,
    );
    expect(code).toBe(1);
    expect(io.stderr.join('\n')).toMatch(
      /^error -33001 \(budget_exceeded\): Budget exceeded: Minimum price for sentiment-analysis/m,
    );
    expect(io.stderr.join('\n')).toMatch(/raise --max-price to at least/);
    expect(io.stdout).toEqual([]);
  });

  it('uses --token against a host with --token', async () => {
    const host = await acmpHost({ flags: { token: [TOKEN] } });
    const io = capture();
    const args = [
      'acmp',
      'invoke',
      host.url,
      '--capability',
      'sentiment-analysis',
      '--input',
      'good',
      '--max-price',
      '0.005',
    ];
    expect(await runCli([...args, '--token', TOKEN], io)).toBe(0);
    expect(await runCli(args, capture())).not.toBe(0);
  });

  it('exits 2 with usage when a required flag is missing', async () => {
    const io = capture();
    expect(await runCli(['acmp', 'invoke', 'http://127.0.0.1:9', '--capability', 'x'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/--capability, --input and --max-price/);
  });

  it('exits 2 for an unknown subcommand', async () => {
    expect(await runCli(['acmp', 'sell'], capture())).toBe(2);
  });
});

describe('progress line', () => {
  const heartbeat = {
    kind: 'heartbeat',
    params: { task_id: 't1', progress: 0.42, detail: 'counted 42 of 100' },
  } as const;

  it('draws one \\r-updated line on a terminal and ends it with a newline', () => {
    const written: string[] = [];
    const io = capture();
    const line = createProgressLine(io, true, (t) => written.push(t));
    line.update(heartbeat);
    line.update({
      kind: 'chunk',
      params: { task_id: 't1', seq: 0, chunk: { type: 'text', data: 'abc' }, final: true },
    });
    line.done();
    expect(written).toEqual([
      '\r\x1b[K… t1 42% counted 42 of 100',
      '\r\x1b[K… t1 1 chunk(s), 3 chars (final)',
      '\n',
    ]);
    expect(io.stderr).toEqual([]);
  });

  it('writes plain lines otherwise', () => {
    const io = capture();
    const line = createProgressLine(io, false, () => {
      throw new Error('not a terminal');
    });
    line.update(heartbeat);
    line.done();
    expect(io.stderr).toEqual(['progress: t1 42% counted 42 of 100']);
  });

  it('says "working" for a heartbeat without progress', () => {
    expect(describeProgress({ kind: 'heartbeat', params: { task_id: 't1' } }, { chunks: 0, chars: 0 })).toBe(
      't1 working',
    );
  });
});
