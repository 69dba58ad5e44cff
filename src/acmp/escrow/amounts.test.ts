import { describe, expect, it } from 'vitest';
import { formatCu, MAX_NANO, parseCu } from './amounts.js';

describe('escrow amounts: integer nano-CU inside, JSON numbers outside', () => {
  it('reads decimal CU exactly, including the exact remainders floats get wrong', () => {
    expect(parseCu(0.3)).toEqual({ ok: true, nano: 300_000_000n });
    expect(parseCu(0.001)).toEqual({ ok: true, nano: 1_000_000n });
    expect(parseCu(1e-9)).toEqual({ ok: true, nano: 1n });
    expect(parseCu(12)).toEqual({ ok: true, nano: 12_000_000_000n });
    expect(parseCu(-0.5)).toEqual({ ok: true, nano: -500_000_000n });
  });

  it('refuses float noise: what is locked or paid is exactly what was sent', () => {
    expect(parseCu(0.1 + 0.2)).toEqual({ ok: false, reason: 'precision' });
    expect(parseCu(0.3 - 0.1)).toEqual({ ok: false, reason: 'precision' });
    expect(parseCu(1.5e-7)).toEqual({ ok: true, nano: 150n });
  });

  it('refuses what is not a multiple of 10⁻⁹ CU, not finite, or above the maximum', () => {
    expect(parseCu(1e-12)).toEqual({ ok: false, reason: 'precision' });
    expect(parseCu(0.0000000015)).toEqual({ ok: false, reason: 'precision' });
    expect(parseCu(Number.POSITIVE_INFINITY)).toEqual({ ok: false, reason: 'not_finite' });
    expect(parseCu(1e7)).toEqual({ ok: false, reason: 'too_large' });
    expect(parseCu(Number(MAX_NANO) / 1e9)).toMatchObject({ ok: true });
  });

  it('writes the shortest JSON number', () => {
    expect(formatCu(2_000_000n)).toBe(0.002);
    expect(formatCu(200_000_000n)).toBe(0.2);
    expect(formatCu(0n)).toBe(0);
    expect(formatCu(1n)).toBe(1e-9);
    expect(formatCu(-1_500_000_000n)).toBe(-1.5);
  });
});
