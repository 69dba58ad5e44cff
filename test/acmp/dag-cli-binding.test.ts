import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/main.js';
import { cleanup, tempDir } from '../helpers/host.js';
import { scrape } from '../helpers/metrics.js';
import { acmpHost } from './helpers.js';

afterEach(cleanup);

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env: {}, stdout, stderr };
}

function dagFile(tasks: Record<string, unknown>[]): string {
  const file = join(tempDir(), 'dag.json');
  writeFileSync(file, JSON.stringify({ dag_id: 'dag_cli', budget_cu: 0.1, tasks, edges: [] }));
  return file;
}

const feel = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  task_id: id,
  capability: 'sentiment-analysis',
  input: { type: 'text', data: 'Customers are happy.' },
  max_price_cu: 0.01,
  ...extra,
});

describe('a2a-commerce acmp dag run --binding (docs/acmp-dag.md "The DAG file")', () => {
  it('buys tasks naming no binding over --binding, and a task naming one over its own', async () => {
    const host = await acmpHost({ transport: 'grpc' });
    const file = dagFile([feel('by_default'), feel('own', { binding: 'MCP' })]);
    const io = capture();
    const code = await runCli(
      ['acmp', 'dag', 'run', file, '--provider', host.url, '--binding', 'GRPC', '--json'],
      io,
    );
    expect(code, io.stderr.join('\n')).toBe(0);
    const text = await scrape(host.url);
    const byBinding = (b: string): number =>
      text
        .split('\n')
        .filter((l) => l.startsWith('a2a_commerce_requests_total{') && l.includes(`binding="${b}"`))
        .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
    expect(byBinding('grpc')).toBeGreaterThan(0);
    expect(byBinding('mcp')).toBeGreaterThan(0);
    expect(byBinding('jsonrpc')).toBe(0);
  });

  it('refuses a --binding the buyer does not speak (usage error, nothing sent)', async () => {
    const io = capture();
    const file = dagFile([feel('a', { provider: 'http://127.0.0.1:9' })]);
    expect(await runCli(['acmp', 'dag', 'validate', file, '--binding', 'SOAP'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/--binding must be one of JSONRPC, HTTP\+JSON, GRPC, MCP/);
  });
});
