import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { TestFn } from 'ava';
import { TEST_PASSWORD } from './users.ts';
import { startTestService, type TestService } from './service.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Debian's Chromium, headless, with the flags this machine's closed network needs (Playwright gives it a fresh profile). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A fresh page that collects Content Security Policy violations from the console into `csp`. */
export async function openPage(browser: Browser, csp: string[] = []): Promise<{ page: Page; csp: string[] }> {
  const page = await (await browser.newContext()).newPage();
  page.on('console', (m) => /Content Security Policy/.test(m.text()) && csp.push(m.text()));
  return { page, csp };
}

/** Sign in through the form as `email` (password TEST_PASSWORD), landing on `next`. */
export async function signIn(page: Page, baseUrl: string, email: string, next = '/'): Promise<void> {
  await page.goto(`${baseUrl}/signin?next=${encodeURIComponent(next)}`);
  await page.fill('#email', email);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
}

/** A service and a headless Chromium for one test file: started before its tests, closed after them. */
export function browserSuite(test: TestFn, opts: Parameters<typeof startTestService>[0] = {}): { service: TestService; browser: Browser } {
  const suite = {} as { service: TestService; browser: Browser };
  test.before(async () => {
    suite.service = await startTestService(opts);
    suite.browser = await launchBrowser();
  });
  test.after.always(async () => {
    await suite.browser?.close();
    await suite.service?.close();
  });
  return suite;
}
