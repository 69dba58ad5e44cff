import { afterAll } from 'vitest';
import { dropPgDatabases } from './pg.js';

// A vitest setup file (vitest.config.ts `setupFiles`): runs in every test file before its tests.
// Whatever a file's tests did, the PostgreSQL databases it made are gone after it.
afterAll(dropPgDatabases);
