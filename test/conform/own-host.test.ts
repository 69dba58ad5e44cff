import { afterAll, describe, expect, it } from 'vitest';
import { acmpChecks } from '../../src/conform/acmp/index.js';
import { runConformance } from '../../src/conform/runner.js';
import { cleanup } from '../helpers/cleanup.js';
import { startFixtureHost } from './fixture-agent.js';

afterAll(cleanup);

describe('the kit against our own host (JSON-RPC)', () => {
  it('passes every ACMP check with a budget for the paid ones', async () => {
    const host = await startFixtureHost();
    const report = await runConformance({ url: host.url, maxSpendCu: 1 });
    const acmp = report.results.filter((r) => acmpChecks.some((c) => c.id === r.id));
    console.log(
      JSON.stringify(
        acmp.filter((r) => r.status !== 'pass'),
        null,
        1,
      ),
    );
    expect(acmp.map((r) => [r.id, r.status])).toEqual(acmpChecks.map((c) => [c.id, 'pass']));
  }, 60_000);
});
