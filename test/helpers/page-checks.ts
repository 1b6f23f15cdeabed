/**
 * Checks every web-app browser test makes: no console error, page error or CSP violation, no
 * horizontal overflow at phone width, and screenshots at desktop and phone width (under the OS's
 * temporary directory; not kept in the repository).
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** A failed load a test provokes on purpose: its URL and status (the console logs "…status of 422…"). */
export interface ExpectedFailure {
  url: RegExp | string;
  status: number;
}

/**
 * Console errors (CSP violations among them), uncaught page errors and answers ≥ 400, as they
 * happen; but the failures in `expected` (it may grow during the test), and only those.
 */
export function collectErrors(page: Page, expected: ExpectedFailure[] = []): string[] {
  const errors: string[] = [];
  const isExpected = (url: string, status: (e: ExpectedFailure) => boolean) =>
    expected.some((e) => (typeof e.url === 'string' ? e.url === url : e.url.test(url)) && status(e));
  page.on('console', (m) => {
    if (m.type() !== 'error' && !/Content Security Policy/.test(m.text())) return;
    if (isExpected(m.location().url, (e) => m.text().includes(`status of ${e.status}`))) return;
    errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400 && !isExpected(r.url(), (e) => e.status === r.status())) errors.push(`response: ${r.status()} ${r.url()}`);
  });
  return errors;
}

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

/** The page's width beyond its viewport (0 when nothing overflows horizontally). */
export async function overflow(page: Page): Promise<number> {
  // The callback runs in the page (no DOM types here): a function, since the page's CSP forbids evaluating strings.
  return page.evaluate(() => {
    const w = globalThis as any;
    return w.document.documentElement.scrollWidth - w.innerWidth;
  });
}

/** A full-page screenshot under os.tmpdir(); returns its size in bytes. */
export async function screenshot(page: Page, name: string): Promise<number> {
  const file = path.join(os.tmpdir(), `tds-${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return statSync(file).size;
}

/** After a viewport change: wait until every chart (a container holding `.chart`, see static/charts.js) has followed its container's width. */
export async function chartsResized(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const charts = [...(globalThis as any).document.querySelectorAll('.chart, [data-drawn]')].filter((el: any) => el.chart);
    return charts.every((el: any) => el.chart.width <= Math.max(200, el.clientWidth));
  });
}

/**
 * At phone width nothing overflows horizontally, and a screenshot at phone then at desktop width
 * (each non-empty); the page is left at desktop width.
 */
export async function phoneAndDesktop(t: { true: (v: boolean, m?: string) => void }, page: Page, name: string): Promise<void> {
  await page.setViewportSize(PHONE);
  await chartsResized(page);
  t.true((await overflow(page)) <= 0, `${name}: no horizontal overflow at ${PHONE.width} px`);
  t.true((await screenshot(page, `${name}-${PHONE.width}`)) > 0);
  await page.setViewportSize(DESKTOP);
  await chartsResized(page);
  t.true((await screenshot(page, `${name}-${DESKTOP.width}`)) > 0);
}
