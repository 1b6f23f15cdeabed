import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

test('the charting library and the site files are served from our origin; nothing else is', async (t) => {
  const js = await fetch(`${service.url}/static/vendor/uPlot.iife.min.js`);
  t.is(js.status, 200);
  t.regex(js.headers.get('content-type') ?? '', /javascript/);
  t.regex(await js.text(), /uPlot/);
  const css = await fetch(`${service.url}/static/vendor/uPlot.min.css`);
  t.is(css.status, 200);
  t.regex(css.headers.get('content-type') ?? '', /text\/css/);
  t.is((await fetch(`${service.url}/static/site.css`)).status, 200);
  for (const path of [
    '/static/vendor/package.json',
    '/static/vendor/uPlot.d.ts',
    '/static/..%2Fhtml.ts',
    '/static/vendor/..%2F..%2Fpackage.json',
    '/static/nothing.js',
  ]) {
    t.is((await fetch(service.url + path)).status, 404, path);
  }
});

test('pages may fetch from their own origin only (the app calls the public API)', async (t) => {
  const res = await fetch(`${service.url}/signin`);
  const csp = res.headers.get('content-security-policy') ?? '';
  t.regex(csp, /connect-src 'self'/);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'[;]/);
});
