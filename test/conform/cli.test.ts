import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { cleanup, shared, tempDir } from '../helpers/cleanup.js';
import { BREAKAGES } from './breakages.js';
import { startBrokenAgent, startFixtureHost } from './fixture-agent.js';

afterAll(cleanup);

const host = shared(() => startFixtureHost());

function capture(): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { out: (t) => stdout.push(t), err: (t) => stderr.push(t), env: {}, stdout, stderr };
}

const CARD_CHECKS = 'acmp-a2a-card-params,acmp-a2a-card-emits,acmp-a2a-budget-exceeded';
const ALL_TRANSPORTS = `${CARD_CHECKS},acmp-a2a-budget-exceeded-rest,acmp-a2a-budget-exceeded-grpc`;

describe('a2a-commerce conform: exit codes (docs/conformance.md "Exit codes")', () => {
  it('exits 0 and prints a table per binding when every check passes', async () => {
    const io = capture();
    expect(await runCli(['conform', host().url, '--only', CARD_CHECKS], io)).toBe(0);
    const text = io.stdout.join('\n');
    expect(text).toContain('ACMP over A2A (seed 000)');
    expect(text).toMatch(/PASS {2}acmp-a2a-card-params +seed 000 §2/);
    expect(text).toContain('3 passed, 0 failed, 0 skipped of 3');
  });

  it('exits 1 when a check fails, with the evidence under it', async () => {
    const breakage = BREAKAGES.find((b) => b.breaks === 'acmp-a2a-budget-exceeded');
    const agent = await startBrokenAgent(breakage?.rewrites ?? {});
    const io = capture();
    expect(await runCli(['conform', agent.url, '--only', ALL_TRANSPORTS], io)).toBe(1);
    const text = io.stdout.join('\n');
    expect(text).toMatch(
      /ACMP over A2A \(seed 000\) — JSON-RPC\n {2}FAIL {2}acmp-a2a-budget-exceeded[^\n]*\n {8}↳ acmp_error code -33099, expected -33001\n/,
    );
    expect(text).toMatch(
      /— HTTP\+JSON\n {2}FAIL {2}acmp-a2a-budget-exceeded-rest[^\n]*\n {8}↳ acmp_error code -33099/,
    );
    expect(text).toMatch(
      /— gRPC\n {2}FAIL {2}acmp-a2a-budget-exceeded-grpc[^\n]*\n {8}↳ acmp_error code -33099/,
    );
  });

  it('exits 2 for an agent without a card', async () => {
    const io = capture();
    expect(await runCli(['conform', `${host().url}/nowhere`, '--only', CARD_CHECKS], io)).toBe(2);
    expect(io.stdout.join('\n')).toContain('agent card: GET');
  });

  it.each([
    [['conform'], 'exactly one <agent-url>'],
    [['conform', 'ftp://x'], 'not an http(s) URL'],
    [['conform', 'http://x', '--max-spend=-1'], '--max-spend must be a non-negative number'],
    [['conform', 'http://x', '--max-spend', 'lots'], '--max-spend must be a non-negative number'],
    [['conform', 'http://x', '--only', 'nope'], 'unknown check id: nope'],
    [['conform', 'http://x', '--timeout-ms', '0'], '--timeout-ms must be positive'],
  ])('exits 2 on a usage error: %j', async (argv, message) => {
    const io = capture();
    expect(await runCli(argv, io)).toBe(2);
    expect(io.stderr.join('\n')).toContain(message);
  });
});

describe('a2a-commerce conform: --json and --junit (docs/conformance.md "Output formats")', () => {
  it('prints the documented JSON shape and writes one JUnit testcase per check', async () => {
    const io = capture();
    const file = join(tempDir(), 'conform.xml');
    const argv = [
      'conform',
      host().url,
      '--json',
      '--junit',
      file,
      '--only',
      `${CARD_CHECKS},acmp-a2a-proof-grpc`,
    ];
    expect(await runCli(argv, io)).toBe(0);
    const report = JSON.parse(io.stdout.join('\n')) as Record<string, unknown>;
    expect(Object.keys(report)).toEqual([
      'version',
      'agent',
      'budget',
      'startedAt',
      'durationMs',
      'summary',
      'results',
    ]);
    expect(report.summary).toEqual({ pass: 3, fail: 0, skip: 1, total: 4 });
    expect((report.results as Record<string, unknown>[])[0]).toEqual({
      id: 'acmp-a2a-card-params',
      binding: 'acmp-a2a',
      title: expect.any(String) as string,
      spec: expect.stringContaining('seed 000 §2') as string,
      status: 'pass',
      durationMs: expect.any(Number) as number,
    });
    const xml = readFileSync(file, 'utf8');
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(xml.match(/<testcase /g)).toHaveLength(4);
    expect((report.results as Record<string, unknown>[])[3]).toMatchObject({
      id: 'acmp-a2a-proof-grpc',
      transport: 'GRPC',
      status: 'skip',
    });
    expect(xml).toMatch(
      /<testcase name="acmp-a2a-proof-grpc" classname="acmp-a2a"[^>]*>\n {6}<properties><property name="transport" value="GRPC"\/><\/properties>\n {6}<skipped message="needs 0.001 CU/,
    );
    expect(xml).toContain('<testsuite name="acmp-a2a" tests="4" failures="0" errors="0" skipped="1"');
  });

  it('writes a failure element with the evidence, XML-escaped', async () => {
    const breakage = BREAKAGES.find((b) => b.breaks === 'acmp-a2a-card-required');
    const agent = await startBrokenAgent(breakage?.rewrites ?? {});
    const file = join(tempDir(), 'conform.xml');
    expect(
      await runCli(['conform', agent.url, '--junit', file, '--only', 'acmp-a2a-card-required'], capture()),
    ).toBe(1);
    expect(readFileSync(file, 'utf8')).toMatch(
      /<failure message="required is true but the card lists input modes other than application\/acmp\+json" type="seed 000 §2 \(line 77\)">/,
    );
  });
});
