/**
 * Throws when a demo expectation does not hold (the demo fails loudly, never silently); after it, the type
 * checker knows the condition holds. Its own module so every scenario can import it without an import
 * cycle through scenarios.ts.
 */
export function expectThat(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`expected ${what}`);
}
