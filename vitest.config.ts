import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on the 2-core CI machine, where most test
    // files wait on sockets, timers and child processes rather than compute. Two keep both cores busy.
    maxWorkers: 2,
    minWorkers: 1,
    // Drops the PostgreSQL databases a file made after the file (test/helpers/pg.ts).
    setupFiles: ['test/helpers/setup.ts'],
  },
});
