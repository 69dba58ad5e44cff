import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../src/', import.meta.url).pathname;

/**
 * Which layers each layer may import (STYLE.md: shared ← acmp, acpspec ← a2a, mcp, http, storage ← server,
 * cli). `connect` picks a binding for a buyer, so it sits above the bindings it picks from.
 */
const ALLOWED: Record<string, string[]> = {
  shared: ['shared'],
  acmp: ['shared', 'acmp'],
  acpspec: ['shared', 'acpspec'],
  // Demo capabilities: sample ACMP providers for the demo and `serve`, outside the protocol core.
  demo: ['shared', 'acmp', 'demo'],
  a2a: ['shared', 'acmp', 'acpspec', 'a2a'],
  mcp: ['shared', 'acmp', 'mcp'],
  http: ['shared', 'acmp', 'acpspec', 'http'],
  storage: ['shared', 'acmp', 'acpspec', 'storage'],
  connect: ['shared', 'acmp', 'a2a', 'mcp', 'connect'],
  server: ['shared', 'acmp', 'acpspec', 'a2a', 'mcp', 'http', 'storage', 'demo', 'server'],
  cli: ['shared', 'acmp', 'acpspec', 'a2a', 'mcp', 'http', 'storage', 'connect', 'demo', 'server', 'cli'],
};

/** SDKs each owned by one binding layer: nothing else may import them. */
const SDK_OWNERS: { prefix: string; layer: string }[] = [
  { prefix: '@a2a-js/sdk', layer: 'a2a' },
  { prefix: '@modelcontextprotocol/', layer: 'mcp' },
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory()
      ? files(path)
      : path.endsWith('.ts') && !path.endsWith('.test.ts')
        ? [path]
        : [];
  });
}

function imports(source: string): string[] {
  return [
    ...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
}

describe('layering (STYLE.md "Layout")', () => {
  const breaches: string[] = [];
  for (const file of files(SRC)) {
    const rel = relative(SRC, file);
    const layer = rel.split('/')[0]!;
    const allowed = ALLOWED[layer];
    const source = readFileSync(file, 'utf8');
    for (const spec of imports(source)) {
      for (const sdk of SDK_OWNERS)
        if (spec.startsWith(sdk.prefix) && layer !== sdk.layer) breaches.push(`${rel} imports ${spec}`);
      if (spec.startsWith('.')) {
        const target = relative(SRC, join(file, '..', spec)).split('/')[0]!;
        if (allowed && !allowed.includes(target)) breaches.push(`${rel} imports ${target}/ (${spec})`);
      }
    }
    // src/index.ts is the package's public face and may re-export any layer.
    if (!ALLOWED[layer] && rel !== 'index.ts') breaches.push(`${rel} is in no known layer`);
    if (layer !== 'server' && layer !== 'cli' && /\bprocess\.(env|exit)\b|\bconsole\./.test(source)) {
      breaches.push(`${rel} uses process.env, process.exit or console`);
    }
  }

  it('keeps @a2a-js/sdk inside src/a2a, the MCP SDKs inside src/mcp and imports pointing one way', () => {
    expect(breaches).toEqual([]);
  });

  it('scans a non-trivial tree', () => {
    expect(files(SRC).length).toBeGreaterThan(20);
  });
});
