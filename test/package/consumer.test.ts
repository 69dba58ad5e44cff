import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { freshClone } from '../helpers/fresh-clone.js';
import { cleanup, tempDir } from '../helpers/host.js';

/*
 * The package as a consumer gets it: `npm pack` in a fresh clone (the `prepare` script builds dist/), the
 * tarball unpacked into a consumer's node_modules next to the production dependencies only (no
 * devDependencies: @types/express must come with the package), then compiled without skipLibCheck and
 * loaded from ESM and from CommonJS.
 */

const exec = promisify(execFile);
const TSC = join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/** Top-level packages of the lockfile that a production install has. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path) && entry.dev !== true)
    .map(([path]) => path.slice('node_modules/'.length));
}

/** The README's TypeScript blocks, as a consumer would paste them. */
function readmeSnippets(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

let consumer: string;
beforeAll(async () => {
  const clone = freshClone();
  const packed = await exec('npm', ['pack', '--json', '--pack-destination', clone], { cwd: clone });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  consumer = tempDir('a2ac-consumer-');
  const modules = join(consumer, 'node_modules');
  mkdirSync(join(modules, 'a2a-commerce'), { recursive: true });
  await exec('tar', [
    '-xzf',
    join(clone, filename),
    '-C',
    join(modules, 'a2a-commerce'),
    '--strip-components=1',
  ]);
  for (const name of productionPackages()) {
    mkdirSync(join(modules, name, '..'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules', name), join(modules, name));
  }
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', type: 'module', private: true }),
  );
}, 240_000);
afterAll(cleanup);

describe('the published package (npm pack of a fresh clone)', () => {
  it('ships dist with types, the schemas and the docs, built by prepare', () => {
    const root = join(consumer, 'node_modules', 'a2a-commerce');
    expect(readdirSync(join(root, 'dist'))).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'cli']),
    );
    expect(readdirSync(join(root, 'schemas'))).toContain('acpspec-envelope-0.1.schema.json');
    expect(readdirSync(join(root, 'docs', 'examples'))).toContain('lifecycle');
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    expect(manifest.exports['./package.json']).toBe('./package.json');
    expect(manifest.exports['.']).toMatchObject({ types: './dist/index.d.ts' });
  });

  it("compiles the README's TypeScript without skipLibCheck", async () => {
    const snippets = readmeSnippets();
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    const files = snippets.map((code, i) => {
      const file = `readme-${i + 1}.ts`;
      writeFileSync(join(consumer, file), `${code}\nexport {};\n`);
      return file;
    });
    const compilerOptions = {
      strict: true,
      target: 'ES2022',
      module: 'nodenext',
      moduleResolution: 'nodenext',
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
    };
    writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }));
    const result = await exec(process.execPath, [TSC, '-p', consumer], { cwd: consumer }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(result).toEqual({ code: 0, out: '' });
  }, 120_000);

  it('loads from ESM and starts a host', async () => {
    const script = `
      import { acmpModule, resolveHostConfig, startHost } from 'a2a-commerce';
      const config = resolveHostConfig({ port: '0', 'no-tls': true, db: 'memory' }, {});
      const capabilities = [{ id: 'echo', price: 0, handler: (input) => Promise.resolve(input) }];
      const host = await startHost(config, { modules: [acmpModule({ capabilities })] });
      const card = await (await fetch(host.url + '/.well-known/agent-card.json', { headers: { 'A2A-Version': '1.0' } })).json();
      console.log(card.skills.map((s) => s.id).join(','));
      await host.close();
    `;
    writeFileSync(join(consumer, 'esm.mjs'), script);
    const { stdout } = await exec(process.execPath, ['esm.mjs'], { cwd: consumer });
    expect(stdout.trim()).toBe('echo');
  });

  it('loads from CommonJS with require() (Node 20.19+)', async () => {
    writeFileSync(
      join(consumer, 'cjs.cjs'),
      `const { startHost } = require('a2a-commerce'); const { version } = require('a2a-commerce/package.json');
       console.log(typeof startHost, version);`,
    );
    const { stdout } = await exec(process.execPath, ['cjs.cjs'], { cwd: consumer });
    expect(stdout.trim()).toMatch(/^function \d+\.\d+\.\d+$/);
  });

  it('runs its CLI from dist', async () => {
    const bin = join(consumer, 'node_modules', 'a2a-commerce', 'dist', 'cli', 'bin.js');
    const { stdout } = await exec(process.execPath, [bin, 'acp', 'new', 'snapshot'], { cwd: consumer });
    expect(JSON.parse(stdout)).toMatchObject({ acp_version: '0.1' });
  });
});
