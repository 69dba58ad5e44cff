import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  browserAvailability,
  buildConsoleAssets,
  launchChromium,
  publishScreenshot,
  screenshotPath,
} from './helpers/browser.js';
import {
  BUYER_SECRET,
  consoleBuyer,
  oneInvoke,
  OPERATOR,
  runConsoleWorkload,
  startConsoleHost,
  type ConsoleHost,
  type ConsoleWorkload,
} from './helpers/console-workload.js';
import { cleanup } from './helpers/host.js';

const available = browserAvailability();
if (!available.run) console.warn(`console browser test skipped: ${available.reason}`);

let host: ConsoleHost;
let workload: ConsoleWorkload;
let browser: Browser;
let page: Page;

/** Screenshots a page into test-results/console/ (and docs/console/ when asked). */
async function shoot(name: string): Promise<void> {
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
  publishScreenshot(name);
}

const text = (testid: string) => page.getByTestId(testid).first();

describe.runIf(available.run)('operator console in chromium (docs/console.md)', () => {
  beforeAll(async () => {
    buildConsoleAssets();
    host = await startConsoleHost();
    workload = await runConsoleWorkload(host);
    browser = await launchChromium();
    const context = await browser.newContext({
      ignoreHTTPSErrors: true,
      viewport: { width: 1440, height: 900 },
    });
    page = await context.newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await cleanup();
  });

  it('refuses without the operator credential and with a caller token', async () => {
    await page.goto(`${host.url}/console/`);
    await expect.poll(() => page.getByTestId('login').isVisible()).toBe(true);
    await page.getByTestId('token').fill(BUYER_SECRET);
    await page.getByTestId('token').press('Enter');
    await expect.poll(() => text('refused').textContent()).toContain('caller token');
    const res = await page.request.get(`${host.url}/console/api/overview`);
    expect(res.status()).toBe(401);
    await shoot('login');
  });

  it('shows the overview with the workload counts', async () => {
    await page.getByTestId('token').fill(OPERATOR.secret);
    await page.getByTestId('token').press('Enter');
    await expect.poll(() => text('count-tasks').textContent()).toBe(String(workload.invokes));
    expect(await text('invokes').textContent()).toBe(String(workload.invokes));
    expect(await text('errors').textContent()).toBe(String(workload.failed));
    expect(await page.getByTestId('hosts').getAttribute('data-rows')).toBe('1');
    await expect.poll(() => text('live').textContent()).toBe('live');
    await shoot('overview');
  });

  it('updates live after a new invoke, without a reload', async () => {
    await page.evaluate(() => Object.assign(globalThis, { notReloaded: true }));
    await oneInvoke(await consoleBuyer(host));
    await expect
      .poll(() => text('count-tasks').textContent(), { timeout: 10_000 })
      .toBe(String(workload.invokes + 1));
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  it('lists tasks, filters them and opens one', async () => {
    await page.goto(`${host.url}/console/#/tasks`);
    await expect.poll(() => text('tasks-total').textContent()).toBe(String(workload.invokes + 1));
    await page.getByTestId('filter-state').selectOption('failed');
    await expect.poll(() => text('tasks-total').textContent()).toBe(String(workload.failed));
    await page.getByTestId('filter-state').selectOption('');
    await expect.poll(() => text('tasks-total').textContent()).toBe(String(workload.invokes + 1));
    await shoot('tasks');
    await page.locator('[data-testid="tasks"] tbody tr').first().click();
    await expect.poll(() => page.getByTestId('page-task').isVisible()).toBe(true);
    expect(await text('task-request').textContent()).toContain('•••');
    await shoot('task');
  });

  it('shows escrow with the conservation line', async () => {
    await page.goto(`${host.url}/console/#/escrow`);
    await expect.poll(() => text('conservation').textContent()).toContain('Ledger conserved');
    expect(await text('count-escrows').textContent()).toBe(String(workload.escrows));
    expect(await text('count-claims').textContent()).toBe('1');
    expect(await text('count-disputes').textContent()).toBe('1');
    // The claim's challenge window (the default 24 h) and the dispute's deadline (7 days) count down.
    const claims = await text('claims').textContent();
    expect(claims).toContain(workload.claimed.escrowId);
    expect(claims).toMatch(/2[34] h left/);
    expect(await text('escrows').textContent()).toMatch(/16[78] h left/);
    await shoot('escrow');
  });

  it('shows negotiation agreements', async () => {
    await page.goto(`${host.url}/console/#/negotiation`);
    await expect.poll(() => text('count-agreements').textContent()).toBe(String(workload.agreements));
    await shoot('negotiation');
  });

  it('shows ACPspec transactions, one with its consent, masked until revealed', async () => {
    await page.goto(`${host.url}/console/#/acp`);
    await expect.poll(() => text('count-transactions').textContent()).toBe(String(workload.transactions));
    await shoot('acpspec');
    await page.locator('[data-testid="transactions"] tbody tr').first().click();
    await expect.poll(() => page.getByTestId('consent').isVisible()).toBe(true);
    expect(await text('snapshot').textContent()).not.toContain('ada@example.com');
    expect(await text('lifecycle').locator('li').count()).toBe(2);
    expect(await page.locator('[data-testid="consent"] .conflict').count()).toBe(1);
    await shoot('transaction');
    await page.getByTestId('reveal').check();
    await expect.poll(() => text('snapshot').textContent()).toContain('ada@example.com');
  });
});
