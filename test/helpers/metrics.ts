import { expect, vi } from 'vitest';

/** The value of one sample of the exposition text, by its name and exact label set (0 when absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const got = (match[2] ?? '').split(',').filter(Boolean).sort().join(',');
    if (got === wanted) return Number(match[3]);
  }
  return 0;
}

/** `GET <url>/metrics` (or `url` itself when it names the path): 200 in the text format, its text. */
export async function scrape(
  url: string,
  init: RequestInit = {},
  fetcher: typeof fetch = fetch,
): Promise<string> {
  const res = await fetcher(url.endsWith('/metrics') ? url : `${url}/metrics`, init);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/**
 * Scrapes until `name{labels}` reaches `value` (counts made after a reply was sent, such as a push
 * delivery's, land a moment later), then returns that scrape.
 */
export async function scrapeUntil(
  url: string,
  wanted: { name: string; labels?: Record<string, string>; value: number },
  fetcher: typeof fetch = fetch,
): Promise<string> {
  let text = '';
  await vi.waitFor(
    async () => {
      text = await scrape(url, {}, fetcher);
      expect(sample(text, wanted.name, wanted.labels)).toBeGreaterThanOrEqual(wanted.value);
    },
    { timeout: 10_000, interval: 20 },
  );
  return text;
}
