import type { Page } from 'playwright-core';

/**
 * What the web benchmark (bench/web.ts) and the compare family of its pages
 * (bench/compare/families/web.ts) time in a page: a navigation until its charts are drawn, and the
 * page's own fetch of the API reads it needs. Nothing else is imported here: every compare sampler
 * loads the families, and with them this module, at start-up.
 */

/** Milliseconds from navigation to every `selectors` present (each chart drawn). */
export async function timeTo(page: Page, url: string, selectors: string[]): Promise<number> {
  const t0 = performance.now();
  await page.goto(url);
  for (const s of selectors) await page.waitForSelector(s, { state: 'attached', timeout: 60_000 });
  return performance.now() - t0;
}

/** The same API reads, by the page's own fetch (parsed, not drawn). */
export async function timeFetches(page: Page, paths: string[]): Promise<number> {
  return page.evaluate(async (list) => {
    const t0 = performance.now();
    await Promise.all(list.map(async (p) => (await fetch(p, { headers: { accept: 'application/json' } })).json()));
    return performance.now() - t0;
  }, paths);
}
