/**
 * Splits an RFC 6901 JSON Pointer into unescaped segments. `""` is the root (no segments). The schema
 * already guarantees the pointer syntax of every patch path.
 */
export function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}
