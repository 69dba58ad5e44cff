import { ACMP_CODE, AcmpError } from '../wire/errors.js';
import type { AcmpCapability } from '../provider/provider-types.js';

/** The input size assumed for quoting an input-priced capability when the buyer gives no estimate. */
const DEFAULT_TOKENS_EST = 1_000;

/**
 * 2^20 tokens: about 4 MiB of text at four characters per token, more than an invoke fits in the host's
 * default 1 MiB body, so every input a default host can receive is quotable.
 */
export const DEFAULT_MAX_TOKENS_EST = 1_048_576;

/**
 * A quote's price: fixed, the capability's own {@link AcmpCapability.quotePrice}, or its computed price for
 * a text of the estimated size.
 * @throws AcmpError -33007 `not_quotable` (the cause attached, for the log) when that price cannot be had:
 *   it depends on more than the size (it throws for the sample), or it is no amount.
 */
export function quotePrice(
  capability: AcmpCapability,
  tokensEst: number | undefined,
  tolerance: number,
): { price: number; inputTokensMax?: number } {
  if (typeof capability.price === 'number') return { price: capability.price };
  const tokens = tokensEst ?? DEFAULT_TOKENS_EST;
  let price: number;
  try {
    price = capability.quotePrice
      ? capability.quotePrice(tokensEst === undefined ? {} : { inputTokensEst: tokensEst })
      : capability.price({ type: 'text', data: 'x'.repeat(tokens * 4) });
  } catch (cause) {
    throw notQuotable(capability, cause);
  }
  if (!Number.isFinite(price) || price < 0) throw notQuotable(capability, new RangeError('not an amount'));
  return capability.quotePrice ? { price } : { price, inputTokensMax: Math.ceil(tokens * (1 + tolerance)) };
}

function notQuotable(capability: AcmpCapability, cause: unknown): AcmpError {
  return new AcmpError(
    ACMP_CODE.featureUnsupported,
    { capability: capability.id, reason: 'not_quotable' },
    { cause },
  );
}
