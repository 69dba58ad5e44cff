import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Drops the PostgreSQL databases a file made after the file (test/helpers/pg.ts).
    setupFiles: ['test/helpers/setup.ts'],
  },
});
