/** Small statistics helpers for the benchmark report. */

/** The value at quantile q (0…1) of an ascending array (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

/** Median, minimum and maximum of repeated measurements. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: quantile(sorted, 0.5), min: sorted[0] ?? NaN, max: sorted[sorted.length - 1] ?? NaN };
}

/** A number with a sensible number of digits. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** `median (min–max)`. */
export function fmtSpread(s: Spread): string {
  return `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;
}
