/**
 * Throws when a demo expectation does not hold (the demo fails loudly, never silently). Its own module so
 * every scenario can import it without an import cycle through scenarios.ts.
 */
export function expectThat(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected ${what}`);
}
