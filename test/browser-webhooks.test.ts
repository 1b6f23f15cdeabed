import test from 'ava';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { createTestUser } from './helpers/users.ts';

// Default retry and time limits, so the page states the real ones (24 hours, 5 s).
const suite = browserSuite(test, { workers: true, env: { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true' } });

test('the owner sends a test event from the application settings and sees it delivered in the log', async (t) => {
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('received, thank you');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  const developer = await createTestUser(suite.service);
  const { page, csp } = await openPage(suite.browser);
  await signIn(page, suite.service.url, developer.email, '/settings/applications');
  await page.fill('#name', 'Hook Lab');
  await page.click('button:has-text("Create application")');
  const clientId = (await page.textContent('#client-id'))!;

  // Before any endpoint: the empty log, and a clear refusal.
  t.regex((await page.textContent('#no-deliveries'))!, /^No deliveries yet\./);
  const about = (await page.textContent('h2#webhook-deliveries + p'))!;
  t.regex(about, /X-Signature: t=…,v1=…/);
  t.regex(about, /until the wait would exceed 24 hours/);
  t.regex(about, /5 s limit/);
  t.regex(about, /first 512 bytes/);
  await page.click('#send-test-event');
  t.regex((await page.textContent('#webhook-test-error'))!, /^Add a webhook endpoint first/);

  // An endpoint and a secret, through the settings form.
  await page.goto(`${suite.service.url}/settings/applications/${clientId}`);
  await page.fill('#webhook_endpoints', endpoint);
  await page.check('#new_webhook_secret');
  await page.click('button:has-text("Save")');
  const secret = (await page.textContent('#new-webhook-secret'))!;
  t.regex(secret, /^tds_whs_/);

  await page.goto(`${suite.service.url}/settings/applications/${clientId}`);
  await page.click('#send-test-event');
  t.is(await page.textContent('#webhook-test-notice'), 'Test event queued to 1 endpoint.');
  t.is(new URL(page.url()).hash, '#webhook-deliveries', 'back at the section');

  let status: string | null = null;
  for (let i = 0; i < 100 && status !== 'delivered'; i++) {
    if (i) await page.waitForTimeout(200);
    await page.reload();
    status = await page.getAttribute('#deliveries tbody tr', 'data-status');
  }
  t.is(status, 'delivered');
  const row = page.locator('#deliveries tbody tr').first();
  t.is(await row.getAttribute('data-attempts'), '1');
  t.is(await row.locator('.status-code').textContent(), '200');
  t.is(await row.locator('td').nth(1).textContent(), 'test');
  t.is(await row.locator('td').nth(2).textContent(), clientId);
  t.is(await row.locator('td').nth(3).textContent(), endpoint);
  t.regex((await row.locator('td').first().textContent())!, /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  await row.locator('details.excerpt summary').click();
  t.true(await row.locator('details.excerpt code').isVisible());
  t.is(await row.locator('details.excerpt code').textContent(), 'received, thank you');
  t.is(await page.$('#no-deliveries'), null);

  t.is(received.length, 1);
  const [hit] = received;
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit!.headers['x-signature']))!;
  t.is(createHmac('sha256', secret).update(`${m[1]}.${hit!.body}`).digest('hex'), m[2]!);
  t.like(JSON.parse(hit!.body), { event_type: 'test', resource_id: clientId, user_id: developer.id });

  await page.context().close();
  t.deepEqual(csp, [], 'no CSP violations');
});
