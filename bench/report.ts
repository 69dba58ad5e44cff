import type { Measured } from './procs.js';
import { fmt, fmtSpread, quantile, spread, type Spread } from './stats.js';

/** Per-repetition figures of one measured row. */
export interface Metrics {
  opsPerSec: number;
  eventsPerSec: number;
  p50: number;
  p99: number;
  cpuUsPerOp: number;
  rssMb: number;
  /** Largest deviation of a measured window's rate from the windows' median, relative (steady-state runs). */
  windowDeviation: number;
}

/** Largest relative deviation of any window rate from their median (NaN without windows). */
function deviation(windows: readonly number[] | undefined): number {
  if (!windows || windows.length === 0) return NaN;
  const mid = spread(windows).median;
  return Math.max(...windows.map((w) => Math.abs(w - mid))) / mid;
}

export function metricsOf(m: Measured): Metrics {
  const { load } = m;
  const seconds = load.elapsedMs / 1000;
  return {
    opsPerSec: load.count / seconds,
    eventsPerSec: load.events / seconds,
    p50: quantile(load.latencies, 0.5),
    p99: quantile(load.latencies, 0.99),
    cpuUsPerOp: m.serverCpuUs / load.count,
    rssMb: m.rss / 2 ** 20,
    windowDeviation: deviation(load.windows),
  };
}

/** Every measurement of a run, by row key, one entry per repetition. */
export class Results {
  readonly rows = new Map<string, { group: string; label: string; unit: string; reps: Metrics[] }>();
  readonly notes: string[] = [];

  add(key: string, group: string, label: string, unit: string, metrics: Metrics): Metrics {
    const row = this.rows.get(key) ?? { group, label, unit, reps: [] };
    row.reps.push(metrics);
    this.rows.set(key, row);
    return metrics;
  }

  spreadOf(key: string, pick: (m: Metrics) => number): Spread | undefined {
    const row = this.rows.get(key);
    return row ? spread(row.reps.map(pick)) : undefined;
  }

  /** Ratio `a / b` per repetition (both measured in the same repetition), then its spread. */
  ratio(a: string, b: string, pick: (m: Metrics) => number = (m) => m.opsPerSec): Spread | undefined {
    const ra = this.rows.get(a)?.reps;
    const rb = this.rows.get(b)?.reps;
    if (!ra || !rb || ra.length === 0) return undefined;
    return spread(ra.slice(0, rb.length).map((m, i) => pick(m) / pick(rb[i]!)));
  }

  /** A figure computed per repetition from several rows (all measured in that repetition), then its spread. */
  combine(keys: readonly string[], fn: (rows: Metrics[]) => number): Spread | undefined {
    const series = keys.map((k) => this.rows.get(k)?.reps);
    if (series.some((s) => !s || s.length === 0)) return undefined;
    const reps = Math.min(...series.map((s) => s!.length));
    return spread(Array.from({ length: reps }, (_, i) => fn(series.map((s) => s![i]!))));
  }

  table(group: string): string {
    const lines = [
      '| scenario | per s | events/s | p50 ms | p99 ms | server CPU µs/op | RSS MB | windows ±% |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const row of this.rows.values()) {
      if (row.group !== group) continue;
      const s = (pick: (m: Metrics) => number): string => fmtSpread(spread(row.reps.map(pick)));
      const med = (pick: (m: Metrics) => number): string => fmt(spread(row.reps.map(pick)).median);
      lines.push(
        `| ${row.label} | ${s((m) => m.opsPerSec)} ${row.unit} | ${med((m) => m.eventsPerSec)} | ${med((m) => m.p50)} | ${med((m) => m.p99)} | ${med((m) => m.cpuUsPerOp)} | ${med((m) => m.rssMb)} | ${pct(spread(row.reps.map((m) => m.windowDeviation)).max)} |`,
      );
    }
    return lines.join('\n');
  }

  toJSON(): object {
    return { rows: Object.fromEntries(this.rows), notes: this.notes };
  }
}

const pct = (v: number): string => (Number.isFinite(v) ? (v * 100).toFixed(1) : 'n/a');

/** A line of the ratio table. */
export interface RatioLine {
  label: string;
  value: Spread | undefined;
  target?: { text: string; met: (median: number) => boolean };
}

export function ratioTable(lines: readonly RatioLine[]): string {
  const out = ['| comparison | ratio, median (min–max) | target | met |', '|---|---|---|---|'];
  for (const line of lines) {
    const value = line.value
      ? `${line.value.median.toFixed(3)} (${line.value.min.toFixed(3)}–${line.value.max.toFixed(3)})`
      : 'not measured';
    const met = line.target && line.value ? (line.target.met(line.value.median) ? 'yes' : '**no**') : '';
    out.push(`| ${line.label} | ${value} | ${line.target?.text ?? ''} | ${met} |`);
  }
  return out.join('\n');
}

/**
 * Server CPU per chunk of the c1 stream rows (`[chunks, row key]`): per stream ÷ chunks, and the marginal
 * cost per chunk against the next shorter stream (flat when the marginal cost does not grow with the length).
 */
export function chunkTable(results: Results, rows: readonly (readonly [number, string])[]): string {
  const out = [
    '| chunks | server CPU µs per stream | µs per chunk | marginal µs per chunk (from the shorter) |',
    '|---|---|---|---|',
  ];
  let prev: { size: number; cpu: number } | undefined;
  for (const [size, key] of rows) {
    const cpu = results.spreadOf(key, (m) => m.cpuUsPerOp)?.median;
    if (cpu === undefined) continue;
    const marginal = prev ? fmt((cpu - prev.cpu) / (size - prev.size)) : 'n/a';
    out.push(`| ${size.toLocaleString('en-US')} | ${fmt(cpu)} | ${fmt(cpu / size)} | ${marginal} |`);
    prev = { size, cpu };
  }
  return out.join('\n');
}
