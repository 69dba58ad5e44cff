import type { z } from 'zod';

/**
 * Throws when a demo expectation does not hold (the demo fails loudly, never silently); after it, the type
 * checker knows the condition holds. Its own module so every scenario can import it without an import
 * cycle through scenarios.ts.
 */
export function expectThat(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`expected ${what}`);
}

/**
 * Decodes a value a host sent the demo (a reply's field, an error's `data`) by `schema`.
 * @throws Error `expected <what>`, as {@link expectThat} does, when the value does not match.
 */
export function expectShape<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  expectThat(parsed.success, what);
  return parsed.data;
}
