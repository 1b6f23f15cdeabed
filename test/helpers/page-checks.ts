/**
 * Checks every web-app browser test makes: no console error, page error or CSP violation, no
 * horizontal overflow at phone width, and screenshots at desktop and phone width (under the OS's
 * temporary directory; not kept in the repository).
 */
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';

/** Console errors (CSP violations among them) and uncaught page errors, as they happen. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/.test(m.text())) errors.push(`console: ${m.text()} (${m.location().url})`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`response: ${r.status()} ${r.url()}`);
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

/** After a viewport change: wait until every chart (a container with `.chart`, see static/charts.js) has followed its container's width. */
export async function chartsResized(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const charts = [...(globalThis as any).document.querySelectorAll('.chart')].filter((el: any) => el.chart);
    return charts.every((el: any) => el.chart.width <= Math.max(200, el.clientWidth));
  });
}
