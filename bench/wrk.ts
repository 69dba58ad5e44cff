import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ACMP_EXTENSION_URI, ACMP_MEDIA_TYPE } from '../src/acmp/wire/constants.js';
import { pinned, type CliHost } from './cli-host.js';
import { isStable } from './load-driver.js';

/**
 * wrk, the C load generator, driving non-streamed `acmp/invoke` over A2A JSON-RPC: a Lua script builds
 * every request with a fresh task id (a random prefix per thread and a counter) and checks every answer
 * for `acmp_result`; the server's CPU per request comes from /proc around the measured run.
 */

/** wrk's figures of one run, as the script's `done` hook prints them. */
export interface WrkFigures {
  requests: number;
  durationUs: number;
  /** Socket errors (connect, read, write, timeout) and non-2xx answers, as wrk counts them. */
  errors: number;
  non2xx: number;
  /** Answers that were not a 200 carrying `acmp_result` (counted by the script's `response` hook). */
  unanswered: number;
  p50Us: number;
  p99Us: number;
}

/** Where wrk is, or why there is none: installed from Debian when missing (best effort, root only). */
export function ensureWrk(): { path: string } | { reason: string } {
  const find = (): string | undefined => {
    const found = spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' });
    return found.status === 0 && found.stdout.trim() !== '' ? found.stdout.trim() : undefined;
  };
  const existing = find();
  if (existing) return { path: existing };
  if (process.getuid?.() !== 0)
    return { reason: 'wrk is not installed and this is not root (apt-get install wrk)' };
  // Debian's package; the list is refreshed only when the first try fails.
  const apt = (args: string): boolean =>
    spawnSync('sh', ['-c', `apt-get ${args}`], { stdio: 'ignore' }).status === 0;
  if (!apt('install -y --no-install-recommends wrk')) {
    apt('update');
    apt('install -y --no-install-recommends wrk');
  }
  const installed = find();
  return installed ? { path: installed } : { reason: 'apt-get install wrk failed' };
}

const lua = (text: string): string => JSON.stringify(text);

/** The Lua script: fresh task ids per request, an answer check, and one JSON line of figures at the end. */
export function invokeScript(capability: string, text: string): string {
  const part = (taskId: string): string =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: {
        message: {
          messageId: `m-${taskId}`,
          taskId,
          role: 'ROLE_USER',
          parts: [
            {
              data: {
                acmp_method: 'acmp/invoke',
                params: { task_id: taskId, capability, input: { type: 'text', data: text } },
              },
              mediaType: ACMP_MEDIA_TYPE,
            },
          ],
          extensions: [ACMP_EXTENSION_URI],
        },
        configuration: {},
      },
    });
  const pieces = part('@TASK@').split('@TASK@');
  return `local threads = {}
local next_id = 1
local pieces = { ${pieces.map(lua).join(', ')} }
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end
function init(args)
  math.randomseed(os.time() * 1000 + tid)
  prefix = string.format("%x%x-%d", math.random(0, 2147483647), os.time(), tid)
  n = 0
  bad = 0
  headers = { ["Content-Type"] = "application/json", ["Accept"] = "application/json",
    ["A2A-Version"] = "1.0", ["A2A-Extensions"] = ${lua(ACMP_EXTENSION_URI)} }
end
function request()
  n = n + 1
  local id = "task_" .. prefix .. "-" .. n
  return wrk.format("POST", "/a2a/jsonrpc", headers, table.concat(pieces, id))
end
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"acmp_result"', 1, true) then bad = bad + 1 end
end
function done(summary, latency, requests)
  local unanswered = 0
  for _, t in ipairs(threads) do unanswered = unanswered + t:get("bad") end
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"durationUs":%d,"errors":%d,"non2xx":%d,"unanswered":%d,"p50Us":%d,"p99Us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, unanswered,
    math.floor(latency:percentile(50)), math.floor(latency:percentile(99))))
end
`;
}

/** Writes a script into a fresh temporary file and returns its path. */
export function scriptFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'a2ac-bench-wrk-')), 'invoke.lua');
  writeFileSync(file, text);
  return file;
}

/** One wrk run against a host. */
export interface WrkRun {
  wrk: string;
  script: string;
  connections: number;
  seconds: number;
  /** CPUs to pin wrk to (the host gets the others). */
  cpus?: string;
}

/** Runs wrk once; resolves to the figures its script printed. */
export function runWrk(target: Pick<CliHost, 'url'>, run: WrkRun): Promise<WrkFigures> {
  const threads = run.cpus ? 1 : Math.min(run.connections, 2);
  const command = pinned(run.cpus, [
    run.wrk,
    ...['-t', String(threads), '-c', String(run.connections), '-d', `${run.seconds}s`, '--timeout', '10s'],
    ...['-s', run.script, target.url],
  ]);
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
      if (!line) return reject(new Error(`wrk exited (${code}) without figures: ${out.slice(-500)}`));
      resolve(JSON.parse(line.slice('WRK_JSON '.length)) as WrkFigures);
    });
  });
}

/** A steady-state wrk measurement: 1 s runs until two agree within ±5% (capped), then one long run. */
export interface WrkSteady {
  warmupCapS: number;
  measureS: number;
}

/** Figures of a steady-state wrk measurement with the target's CPU over the measured run. */
export interface WrkMeasured {
  figures: WrkFigures;
  serverCpuUs: number;
  rss: number;
  warmUp: { rates: number[]; stable: boolean };
}

export async function measureWrk(
  target: CliHost,
  run: Omit<WrkRun, 'seconds'> & WrkSteady,
): Promise<WrkMeasured> {
  const rates: number[] = [];
  while (!isStable(rates, 0.05) && rates.length < run.warmupCapS) {
    const w = await runWrk(target, { ...run, seconds: 1 });
    rates.push(w.requests / (w.durationUs / 1e6));
  }
  const before = await target.stats();
  const figures = await runWrk(target, { ...run, seconds: run.measureS });
  const after = await target.stats();
  return {
    figures,
    serverCpuUs: after.cpuUs - before.cpuUs,
    rss: after.rss,
    warmUp: { rates, stable: isStable(rates, 0.05) },
  };
}
