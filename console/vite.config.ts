import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The operator console's build (docs/console.md): plain TypeScript and uPlot, bundled into the package's
 * `dist/console`, which the host serves at `/console/`. Everything ships in the bundle: no CDN, no
 * network at run time.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // No source maps in the package: the sources are in the repository.
    sourcemap: false,
    chunkSizeWarningLimit: 200,
  },
});
