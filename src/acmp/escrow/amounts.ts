/**
 * Escrow amounts (docs/acmp-escrow.md "Amounts"). Layer 4 carries amounts as JSON numbers in CU with no
 * precision rule [L4 §4]; floating-point arithmetic on them cannot settle exactly (0.3 − 0.1 ≠ 0.2). The
 * escrow agent therefore converts every `*_cu` number once, at the edge, into an integer count of
 * nano-CU (10⁻⁹ CU) and computes, compares and stores only integers.
 */

/** Nano-CU per CU: the amount unit the escrow agent advertises (`amount_unit`). */
export const NANO_PER_CU = 1_000_000_000n;

/** The advertised amount unit. */
export const AMOUNT_UNIT = '1e-9 CU';

/**
 * The largest amount (and balance) the agent holds: 2⁵³ − 1 nano-CU (about 9 million CU), so every stored
 * amount is exact in a JSON number, a JavaScript number and a 64-bit column alike.
 */
export const MAX_NANO = BigInt(Number.MAX_SAFE_INTEGER);

/** The outcome of reading a CU number. */
export type NanoParse =
  | { readonly ok: true; readonly nano: bigint }
  | { readonly ok: false; readonly reason: 'not_finite' | 'precision' | 'too_large' };

/**
 * Reads a CU amount as nano-CU, exactly: the number's shortest decimal form (what JSON carried) is
 * converted without floating-point arithmetic. A value that is not a multiple of 10⁻⁹ CU is refused
 * (`precision`) — also float noise such as `0.1 + 0.2` (`0.30000000000000004`): what is locked or paid is
 * exactly what was sent, never a rounding of it.
 */
export function parseCu(cu: number): NanoParse {
  if (!Number.isFinite(cu)) return { ok: false, reason: 'not_finite' };
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(Math.abs(cu).toString());
  const [, whole, fraction = '', exponent = '0'] = match ?? [];
  if (whole === undefined) return { ok: false, reason: 'precision' };
  const digits = BigInt(whole + fraction);
  const scale = Number(exponent) - fraction.length + 9;
  let nano: bigint;
  if (scale >= 0) nano = digits * 10n ** BigInt(scale);
  else {
    const divisor = 10n ** BigInt(-scale);
    if (digits % divisor !== 0n) return { ok: false, reason: 'precision' };
    nano = digits / divisor;
  }
  if (nano > MAX_NANO) return { ok: false, reason: 'too_large' };
  return { ok: true, nano: cu < 0 ? -nano : nano };
}

/**
 * The JSON number for an amount in nano-CU: the double nearest the exact decimal, so `2000000n` is written
 * `0.002`, never `0.0019999999999999996`.
 */
export function formatCu(nano: bigint): number {
  const negative = nano < 0n;
  const abs = negative ? -nano : nano;
  const whole = abs / NANO_PER_CU;
  const fraction = (abs % NANO_PER_CU).toString().padStart(9, '0').replace(/0+$/, '');
  return Number(`${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`);
}

/**
 * A CU amount computed elsewhere (a price, a provider's `cost_cu`) as nano-CU, rounded `up` or `down`
 * when it is not a unit multiple — for sizing checks and claims, never for what a party sent.
 */
export function roundCu(cu: number, direction: 'up' | 'down'): bigint {
  const exact = parseCu(cu);
  if (exact.ok) return exact.nano;
  if (!Number.isFinite(cu)) return direction === 'up' ? MAX_NANO + 1n : 0n;
  return BigInt(direction === 'up' ? Math.ceil(cu * 1e9) : Math.floor(cu * 1e9));
}
