import { describe, expect, it } from 'vitest';
import { breachesOf, folderCycles, treeBreaches, tsFiles } from './helpers/layering.js';

/*
 * Layering (STYLE.md "Layout", docs/house-rules.md "Tests"), checked by test/helpers/layering.ts:
 *
 * - production code in src/<layer>/ imports only the layers its layer may import; @a2a-js/sdk stays in
 *   src/a2a, the MCP SDKs in src/mcp, kysely, pg and better-sqlite3 in src/storage (a few files allowed
 *   with a reason); only server and cli touch process.env, process.exit or console;
 * - a co-located test src/<layer>/**\/*.test.ts imports what its layer may import, plus test/helpers/ and
 *   dev tools (vitest, fast-check, …) — a test that needs another layer lives under test/;
 * - a file under test/ may import production code of any layer through src/ paths, scripts/, test/
 *   helpers and packages, but never another test file, build output (dist/) or a package's internals by
 *   path (…/dist/…, node_modules/…).
 */

const ROOT = new URL('..', import.meta.url).pathname;

describe('layering (STYLE.md "Layout")', () => {
  it('holds for production code, co-located tests and test/ files', () => {
    expect(treeBreaches(ROOT)).toEqual([]);
  });

  it('has exactly the known parent/child folder pairs importing each other, no more and no stale one', () => {
    // Each is a parent folder's shared module used by a child it also imports; they go with the
    // sub-layer layout (docs/architecture.md). Sibling folders — bindings, protocols — never form one.
    // ACMP has none: its shared modules are the wire model (src/acmp/wire/), which imports no other folder.
    const known = [
      'src/cli <-> src/cli/demo',
      'src/conform <-> src/conform/acmp',
      'src/conform <-> src/conform/acpspec',
    ];
    expect(folderCycles(ROOT)).toEqual(known);
  });

  it('scans a non-trivial tree', () => {
    expect(tsFiles(ROOT, 'src').length).toBeGreaterThan(20);
    expect(tsFiles(ROOT, 'test').length).toBeGreaterThan(20);
  });
});

describe('the layering checker finds each kind of breach', () => {
  const breach = (path: string, source: string): string[] => breachesOf(path, source);

  it('a layer importing a layer above it, in production code and in its co-located tests', () => {
    const source = `import { startHost } from '../../server/host.js';\n`;
    expect(breach('src/acmp/provider/provider.ts', source)).toEqual([
      'src/acmp/provider/provider.ts imports ../../server/host.js (server/ is not below acmp/)',
    ]);
    expect(breach('src/acmp/provider/provider.test.ts', source)).toHaveLength(1);
    expect(breach('src/server/modules/host.test.ts', source)).toEqual([]);
  });

  it('an SDK outside the layer that owns it, also in a test of another layer', () => {
    const source = `import { A2AClient } from '@a2a-js/sdk/client';\nconst m = await import('@modelcontextprotocol/client');\n`;
    expect(breach('src/acmp/x.ts', source)).toHaveLength(2);
    expect(breach('src/acmp/x.test.ts', source)).toHaveLength(2);
    expect(breach('src/a2a/x.ts', source)).toHaveLength(1);
  });

  it('the OpenTelemetry SDK outside src/server, while its API may be used anywhere', () => {
    const sdk = `import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';\n`;
    const api = `import { trace } from '@opentelemetry/api';\n`;
    expect(breach('src/shared/x.ts', sdk)).toEqual([
      'src/shared/x.ts imports @opentelemetry/sdk-trace-node (owned by src/server)',
    ]);
    expect(
      breach('src/a2a/x.ts', `import { W3CTraceContextPropagator } from '@opentelemetry/core';\n`),
    ).toHaveLength(1);
    expect(breach('src/server/tracing.ts', sdk)).toEqual([]);
    expect(breach('src/shared/x.ts', api)).toEqual([]);
  });

  it('kysely, pg or better-sqlite3 outside src/storage, but for the files allowed with a reason', () => {
    const source = `import { sql } from 'kysely';\nimport pg from 'pg';\nimport Db from 'better-sqlite3';\n`;
    expect(breach('src/server/x.ts', source)).toEqual([
      'src/server/x.ts imports kysely (owned by src/storage)',
      'src/server/x.ts imports pg (owned by src/storage)',
      'src/server/x.ts imports better-sqlite3 (owned by src/storage)',
    ]);
    expect(breach('src/acmp/x.test.ts', `import { sql } from 'kysely';\n`)).toHaveLength(1);
    expect(breach('src/storage/sql/x.ts', source)).toEqual([]);
    expect(breach('src/server/console/tables.ts', `import { sql } from 'kysely';\n`)).toEqual([]);
    expect(breach('src/server/x.ts', `import Cursor from 'pg-cursor';\n`)).toEqual([]);
  });

  it('a co-located test reaching test/ beyond the helpers, or another test file', () => {
    expect(breach('src/storage/x.test.ts', `import { h } from '../../test/helpers/pg.js';\n`)).toEqual([]);
    expect(breach('src/storage/x.test.ts', `import { f } from '../../test/acmp/helpers.js';\n`)).toHaveLength(
      1,
    );
    expect(breach('src/storage/x.test.ts', `import '../../test/helpers/a.test.js';\n`)).toHaveLength(1);
    expect(breach('src/storage/x.test.ts', `import { g } from '../../scripts/gen.js';\n`)).toHaveLength(1);
  });

  it('the identity core reaching ACMP code beyond the wire model', () => {
    expect(breach('src/acmp/identity/verify.ts', `import { AcmpError } from '../wire/errors.js';\n`)).toEqual(
      [],
    );
    expect(
      breach('src/acmp/identity/verify.ts', `import { x } from '../provider/provider.js';\n`),
    ).toHaveLength(1);
    expect(
      breach('src/acmp/identity/verify.test.ts', `import { x } from '../buyer/buyer.js';\n`),
    ).toHaveLength(1);
    expect(breach('src/acmp/provider/provider.ts', `import { v } from '../identity/verify.js';\n`)).toEqual(
      [],
    );
  });

  it('the ACMP wire model reaching anything else of ACMP, provider and buyer reaching each other', () => {
    expect(breach('src/acmp/wire/messages.ts', `import { c } from './constants.js';\n`)).toEqual([]);
    expect(
      breach('src/acmp/wire/messages.ts', `import { p } from '../identity/prove-identity.js';\n`),
    ).toEqual([
      'src/acmp/wire/messages.ts imports ../identity/prove-identity.js (src/acmp/wire/ reaches only itself in src/acmp/)',
    ]);
    expect(breach('src/acmp/wire/proof.test.ts', `import { b } from '../buyer/buyer.js';\n`)).toHaveLength(1);
    expect(breach('src/acmp/provider/provider.ts', `import { m } from '../wire/messages.js';\n`)).toEqual([]);
    expect(breach('src/acmp/provider/provider.ts', `import { b } from '../buyer/buyer.js';\n`)).toHaveLength(
      1,
    );
    expect(
      breach('src/acmp/buyer/buyer.test.ts', `import { p } from '../provider/provider.js';\n`),
    ).toHaveLength(1);
    expect(breach('src/acmp/buyer/buyer.ts', `import { x } from '../index.js';\n`)).toHaveLength(1);
    expect(breach('src/acmp/negotiation/x.ts', `import { t } from '../provider/task-store.js';\n`)).toEqual(
      [],
    );
    expect(breach('src/acmp/negotiation/x.ts', `import { b } from '../buyer/buyer.js';\n`)).toHaveLength(1);
    expect(breach('src/acmp/dag/x.ts', `import { p } from '../provider/provider.js';\n`)).toHaveLength(1);
    expect(breach('src/acmp/loopback-transport.ts', `import { p } from './provider/provider.js';\n`)).toEqual(
      [],
    );
  });

  it('an A2A binding reaching the host or another binding, the host a binding, a neutral file a subfolder', () => {
    expect(breach('src/a2a/acp/x.ts', `import { b } from '../part-codec.js';\n`)).toEqual([]);
    expect(breach('src/a2a/acp/x.ts', `import { m } from '../host/mount.js';\n`)).toEqual([
      'src/a2a/acp/x.ts imports ../host/mount.js (src/a2a/acp/ reaches only itself, src/a2a/* in src/a2a/)',
    ]);
    expect(breach('src/a2a/escrow/x.ts', `import { b } from '../acmp/buyer.js';\n`)).toHaveLength(1);
    // The ACMP buyer is handed its escrow (src/connect/a2a-acmp-buyer.ts, docs/acmp-escrow.md §13).
    expect(breach('src/a2a/acmp/buyer.ts', `import { c } from '../escrow/buyer-escrow.js';\n`)).toHaveLength(
      1,
    );
    expect(breach('src/a2a/host/x.ts', `import { e } from '../escrow/binding.js';\n`)).toHaveLength(1);
    expect(breach('src/a2a/host/x.ts', `import { c } from '../binding.js';\n`)).toEqual([]);
    expect(breach('src/a2a/x.ts', `import { h } from './host/mount.js';\n`)).toHaveLength(1);
    expect(breach('src/a2a/x.ts', `import { h } from './part-codec.js';\n`)).toEqual([]);
  });

  it('production code importing from test/', () => {
    expect(breach('src/storage/x.ts', `import { h } from '../../test/helpers/pg.js';\n`)).toHaveLength(1);
  });

  it('a test/ file importing another test file, build output or package internals by path', () => {
    const ok = `import { startHost } from '../../src/server/host.js';\nimport { x } from '../helpers/host.js';\nimport pg from 'pg';\n`;
    expect(breach('test/acmp/x.test.ts', ok)).toEqual([]);
    expect(breach('test/acmp/x.test.ts', `import { y } from './other.test.js';\n`)).toHaveLength(1);
    expect(breach('test/acmp/x.test.ts', `import { y } from '../../dist/index.js';\n`)).toHaveLength(1);
    expect(
      breach('test/acmp/x.test.ts', `import { y } from '@a2a-js/sdk/dist/server/index.js';\n`),
    ).toHaveLength(1);
    expect(breach('test/acmp/x.test.ts', `import { y } from '../../bench/run.js';\n`)).toHaveLength(1);
  });

  it('process.env and console outside server and cli, in production code only', () => {
    const source = `const url = process.env.A2AC_DB;\n`;
    expect(breach('src/storage/sql/database.ts', source)).toHaveLength(1);
    expect(breach('src/cli/bin.ts', source)).toEqual([]);
    expect(breach('src/storage/sql/database.test.ts', source)).toEqual([]);
  });
});
