import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The layering rules (STYLE.md "Layout", docs/house-rules.md "Tests"), as a function of a file's path
 * and source so that test/layering.test.ts can run it on the tree and on synthetic breaches.
 *
 * - Production code in `src/<layer>/` imports only the layers its layer may import; `@a2a-js/sdk` stays
 *   in `src/a2a`, the MCP SDKs in `src/mcp`, `kysely`, `pg` and `better-sqlite3` in
 *   `src/storage` (a few files allowed with a reason); only `server` and `cli` touch `process.env`, `process.exit`
 *   or `console`.
 * - A co-located test `src/<layer>/**\/*.test.ts` imports what its layer may import, plus the shared
 *   test helpers under `test/helpers/` and dev tools (vitest, fast-check, …) — nothing else under
 *   `test/`, no other layer's code, no SDK its layer does not own.
 * - A file under `test/` may import production code of any layer through `src/` paths, the repository's
 *   `scripts/`, `test/` helpers and packages, but never another test file (`*.test.js`), never build output (`dist/`), and never a
 *   package's internals by path (`…/dist/…`, `node_modules/…`).
 */

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
  // The buyer's wallet (Layer 7 §6): transport-free, above the ACMP types whose spends it guards.
  wallet: ['shared', 'acmp', 'wallet'],
  a2a: ['shared', 'acmp', 'acpspec', 'wallet', 'a2a'],
  // ACPspec over MCP (src/mcp/acp/): a binding, above the ACPspec core as a2a/ and http/ are.
  mcp: ['shared', 'acmp', 'acpspec', 'wallet', 'mcp'],
  http: ['shared', 'acmp', 'acpspec', 'http'],
  storage: ['shared', 'acmp', 'acpspec', 'wallet', 'storage'],
  connect: ['shared', 'acmp', 'wallet', 'a2a', 'mcp', 'storage', 'connect'],
  // The host runs whatever modules it is given; which capabilities `serve` offers is the CLI's choice.
  server: ['shared', 'acmp', 'acpspec', 'wallet', 'a2a', 'mcp', 'http', 'storage', 'server'],
  // The conformance kit: a black-box client of remote agents over every binding (docs/conformance.md).
  conform: ['shared', 'acmp', 'acpspec', 'a2a', 'mcp', 'http', 'conform'],
  cli: [
    'shared',
    'acmp',
    'acpspec',
    'wallet',
    'a2a',
    'mcp',
    'http',
    'storage',
    'connect',
    'conform',
    'demo',
    'server',
    'cli',
  ],
};

/**
 * Sub-layers inside a layer: the files under `folder` may import, of their own layer, only `folder`
 * itself and `also` (a file, or `dir/*` for the files directly in `dir`). `flat` rules hold only for the
 * files directly in `folder`, whose subfolders have rules of their own.
 *
 * - ACMP (docs/architecture.md "Layers"): the wire model (src/acmp/wire/: constants, the error table, the
 *   message schemas, the result proof) reaches nothing else of ACMP. The provider core (src/acmp/provider/)
 *   and the buyer core (src/acmp/buyer/) build on the wire model and identity, never on each other; the
 *   files directly in src/acmp/ (the barrel, the loopback transport wiring a buyer to a provider) may
 *   reach both.
 * - Layer 7 identity (src/acmp/identity/) is the transport-free core every ACMP role builds on —
 *   signatures, DIDs, resolution — so it reaches nothing of ACMP but the wire model.
 * - The Layer 2 DAG runner (src/acmp/dag/, docs/acmp-dag.md) reaches ACMP's wire model (proof check and
 *   error table included) and the buyer core's event types (its port's contract): no binding, no provider side.
 * - Escrow (src/acmp/escrow/) reaches the wire model and identity; negotiation (src/acmp/negotiation/)
 *   implements the provider's negotiation port, so it reaches the provider core too, never the buyer.
 * - A2A (docs/architecture.md "Layers"): the files directly in src/a2a/ are the neutral A2A pieces every
 *   side shares (the binding contract, part codecs, the client, the card); the host (src/a2a/host/) and
 *   each protocol binding (acmp, acp, escrow) and the TCK executor build on them only — the host never
 *   reaches a binding (it is given them), and bindings never reach each other.
 */
const ACMP_WIRE = 'src/acmp/wire/*';
const ACMP_IDENTITY = 'src/acmp/identity/*';
const A2A_NEUTRAL = 'src/a2a/*';
const SUB_LAYERS: { folder: string; also: string[]; flat?: boolean }[] = [
  { folder: 'src/acmp/wire/', also: [] },
  { folder: 'src/acmp/identity/', also: [ACMP_WIRE] },
  { folder: 'src/acmp/provider/', also: [ACMP_WIRE, ACMP_IDENTITY] },
  { folder: 'src/acmp/buyer/', also: [ACMP_WIRE, ACMP_IDENTITY] },
  { folder: 'src/acmp/dag/', also: [ACMP_WIRE, 'src/acmp/buyer/buyer.js'] },
  { folder: 'src/acmp/escrow/', also: [ACMP_WIRE, ACMP_IDENTITY] },
  { folder: 'src/acmp/negotiation/', also: [ACMP_WIRE, ACMP_IDENTITY, 'src/acmp/provider/*'] },
  { folder: 'src/a2a/', also: [], flat: true },
  { folder: 'src/a2a/host/', also: [A2A_NEUTRAL] },
  { folder: 'src/a2a/acp/', also: [A2A_NEUTRAL] },
  { folder: 'src/a2a/escrow/', also: [A2A_NEUTRAL] },
  { folder: 'src/a2a/tck/', also: [A2A_NEUTRAL] },
  { folder: 'src/a2a/acmp/', also: [A2A_NEUTRAL] },
];

/** Whether a sub-layer rule covers a file. */
function coveredBy(rule: { folder: string; flat?: boolean }, path: string): boolean {
  return rule.flat ? `${dirname(path)}/` === rule.folder : path.startsWith(rule.folder);
}

/** Whether a sub-layer rule lets its files import `landing`. */
function reaches(rule: { folder: string; also: string[]; flat?: boolean }, landing: string): boolean {
  if (coveredBy(rule, landing)) return true;
  return rule.also.some((a) => (a.endsWith('/*') ? `${dirname(landing)}/*` === a : a === landing));
}

/** Files outside src/storage that import the database packages, and why. */
const DB_ALLOWED: Record<string, string> = {
  'src/a2a/host/sdk-stores.ts': "hands the shared Kysely instance to the A2A SDK's own database stores",
  'src/server/console/task-reads.ts': "the console's aggregate reads are SQL templates over the ACMP tables",
  'src/server/console/tables.ts': "the console lists the database's tables through the catalogue",
  'src/server/health.test.ts': 'stalls a real connection to test the readiness probe',
};

/**
 * SDKs each owned by one layer: nothing else may import them. `except` names packages under the prefix
 * that any layer may import.
 */
const SDK_OWNERS: { prefix: string; layer: string; except?: string[]; allowed?: Record<string, string> }[] = [
  { prefix: '@a2a-js/sdk', layer: 'a2a' },
  // The database drivers and the query builder: storage is the SQL edge (docs/house-rules.md "Tests").
  // `allowed` names the files elsewhere that still reach them, each with its reason.
  { prefix: 'kysely', layer: 'storage', allowed: DB_ALLOWED },
  { prefix: 'pg', layer: 'storage', allowed: DB_ALLOWED },
  { prefix: 'better-sqlite3', layer: 'storage', allowed: DB_ALLOWED },
  { prefix: '@modelcontextprotocol/', layer: 'mcp' },
  // The Prometheus client: only the host exposes metrics; cores report through src/shared/metrics.ts.
  { prefix: 'prom-client', layer: 'server' },
  // The OpenTelemetry SDK: only the host registers it (src/server/tracing.ts); the API is for every layer.
  { prefix: '@opentelemetry/', layer: 'server', except: ['@opentelemetry/api'] },
];

/** Every `.ts` file under `dir`, as paths relative to `root`. */
export function tsFiles(root: string, dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return tsFiles(root, path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The module specifiers a source imports or re-exports, statically or dynamically. */
function imports(source: string): string[] {
  return [
    ...source.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g),
    ...source.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g),
    ...source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/** The breaches of one file, `path` relative to the repository root (`src/…` or `test/…`). */
export function breachesOf(path: string, source: string): string[] {
  const [top, layer = ''] = path.split('/');
  const isTest = path.endsWith('.test.ts');
  const breaches: string[] = [];
  for (const spec of imports(source)) {
    const breach = top === 'test' ? testFileBreach(path, spec) : srcFileBreach({ path, layer, isTest }, spec);
    if (breach) breaches.push(`${path} imports ${spec}${breach}`);
  }
  if (top === 'src' && !isTest) {
    // src/index.ts is the package's public face and may re-export any layer.
    if (!ALLOWED[layer] && path !== 'src/index.ts') breaches.push(`${path} is in no known layer`);
    if (layer !== 'server' && layer !== 'cli' && /\bprocess\.(env|exit)\b|\bconsole\./.test(source))
      breaches.push(`${path} uses process.env, process.exit or console`);
  }
  return breaches;
}

/** Whether `spec` is the package `prefix` or a path inside it (`pg` is not `pg-cursor`); a prefix ending in `/` is a scope. */
function isPackage(spec: string, prefix: string): boolean {
  return prefix.endsWith('/') ? spec.startsWith(prefix) : spec === prefix || spec.startsWith(`${prefix}/`);
}

/** Where a relative specifier lands, relative to the repository root. */
function target(path: string, spec: string): string {
  return join(path, '..', spec);
}

function srcFileBreach(file: { path: string; layer: string; isTest: boolean }, spec: string): string {
  for (const sdk of SDK_OWNERS)
    if (
      isPackage(spec, sdk.prefix) &&
      !sdk.except?.includes(spec) &&
      file.layer !== sdk.layer &&
      sdk.allowed?.[file.path] === undefined
    )
      return ` (owned by src/${sdk.layer})`;
  if (!spec.startsWith('.')) return '';
  const [top, layer = ''] = target(file.path, spec).split('/');
  if (top === 'src') {
    const landing = target(file.path, spec);
    const sub = SUB_LAYERS.find((s) => coveredBy(s, file.path));
    if (sub && landing.startsWith(`src/${file.layer}/`) && !reaches(sub, landing)) {
      const reachable = ['itself', ...sub.also].join(', ');
      return ` (${sub.folder}${sub.flat ? '*' : ''} reaches only ${reachable} in src/${file.layer}/)`;
    }
    const allowed = ALLOWED[file.layer];
    return allowed && !allowed.includes(layer) ? ` (${layer}/ is not below ${file.layer}/)` : '';
  }
  if (file.isTest && top === 'test' && layer === 'helpers' && !spec.endsWith('.test.js')) return '';
  return file.isTest ? ' (a co-located test reaches test/helpers only)' : ' (production code stays in src/)';
}

function testFileBreach(path: string, spec: string): string {
  if (spec.endsWith('.test.js') || spec.endsWith('.test.ts')) return ' (another test file)';
  if (/(^|\/)(dist|node_modules)\//.test(spec)) return ' (build output or package internals by path)';
  if (!spec.startsWith('.')) return '';
  const [top] = target(path, spec).split('/');
  return top === 'src' || top === 'test' || top === 'scripts' ? '' : ' (outside src/, test/ and scripts/)';
}

/** Every breach in the tree under `root` (the repository). */
export function treeBreaches(root: string): string[] {
  return [...tsFiles(root, 'src'), ...tsFiles(root, 'test')].flatMap((path) =>
    breachesOf(path, readFileSync(join(root, path), 'utf8')),
  );
}

/**
 * The pairs of src/ folders that import each other (production code only), as `a <-> b`, sorted: a folder
 * of a layer is a sub-layer, and two sub-layers leaning on each other are one.
 */
export function folderCycles(root: string): string[] {
  const edges = new Set<string>();
  for (const path of tsFiles(root, 'src')) {
    if (path.endsWith('.test.ts')) continue;
    const from = dirname(path);
    for (const spec of imports(readFileSync(join(root, path), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const to = dirname(target(path, spec));
      if (to !== from && to.startsWith('src/')) edges.add(`${from} -> ${to}`);
    }
  }
  const cycles = new Set<string>();
  for (const edge of edges) {
    const [a = '', b = ''] = edge.split(' -> ');
    if (edges.has(`${b} -> ${a}`)) cycles.add([a, b].sort().join(' <-> '));
  }
  return [...cycles].sort();
}
