import { z } from 'zod';

/*
 * ACMP Layer 6 messages (layers/06-negotiation-protocol.md §2), written as zod schemas like Layer 1's:
 * loose objects, so unknown fields pass through unchanged.
 */

/** `acmp/offerRequest` params (L6 §2.1). */
export const OfferRequestParamsSchema = z.looseObject({
  capability: z.string().min(1),
  input_tokens_est: z.int().nonnegative().optional(),
  max_price_cu: z.number().nonnegative().optional(),
  max_latency_ms: z.int().positive().optional(),
  preferred_tier: z.string().optional(),
  proof_method: z.string().min(1).optional(),
  challenge_window_ms: z.int().nonnegative().optional(),
  // L6 §3: the provider MAY clamp it; a negative validity is a malformed request (docs/acmp-negotiation.md).
  offer_valid_ms: z.int().nonnegative().optional(),
});
export type OfferRequestParams = z.infer<typeof OfferRequestParamsSchema>;

/** The Offer (L6 §2.1 result): a fixed task price the provider is bound to until `valid_until_ms`. */
export const OfferSchema = z.looseObject({
  offer_id: z.string().min(1),
  capability: z.string().min(1),
  price_cu: z.number().nonnegative(),
  valid_until_ms: z.int(),
  latency_sla_ms: z.int().positive().optional(),
  proof_method: z.string().min(1).optional(),
  challenge_window_ms: z.int().nonnegative().optional(),
  /** Ours: the largest input (in estimated tokens) the price covers (docs/acmp-negotiation.md "Price binding"). */
  input_tokens_max: z.int().nonnegative().optional(),
  sig: z.looseObject({}).optional(),
});
export type Offer = z.infer<typeof OfferSchema>;

/** `acmp/accept` params (L6 §2.2). */
export const AcceptParamsSchema = z.looseObject({
  offer_id: z.string().min(1),
  escrow_id: z.string().min(1).optional(),
});
export type AcceptParams = z.infer<typeof AcceptParamsSchema>;

/** The Ack (L6 §2.2 result). `escrow_id` is null for direct settlement. */
export const AckSchema = z.looseObject({
  offer_id: z.string().min(1),
  escrow_id: z.string().min(1).nullable(),
  price_cu: z.number().nonnegative(),
});
export type Ack = z.infer<typeof AckSchema>;

/**
 * `acmp/counterOffer` params (ours, session mode; docs/acmp-negotiation.md): the standing offer countered
 * and the terms the buyer proposes instead. Only the provider's offers can be accepted, never a counter.
 */
export const CounterOfferParamsSchema = z.looseObject({
  offer_id: z.string().min(1),
  price_cu: z.number().nonnegative().optional(),
  proof_method: z.string().min(1).optional(),
  challenge_window_ms: z.int().nonnegative().optional(),
  latency_sla_ms: z.int().positive().optional(),
});
export type CounterOfferParams = z.infer<typeof CounterOfferParamsSchema>;
