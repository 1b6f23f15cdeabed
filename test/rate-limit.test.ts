import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { KeepAliveConnection } from './helpers/keep-alive.ts';

/**
 * Issue 16: a per-credential rate limit on the token-authenticated API (rate-limiter-flexible on
 * Redis), with RateLimit headers on every answer and 429 + Retry-After past the limit.
 */
let service: TestService;
test.before(async () => {
  service = await startTestService({ env: { API_RATE_LIMIT: '5', API_RATE_WINDOW_SECONDS: '60' } });
});
test.after.always(() => service?.close());

test('each credential has its own budget: RateLimit headers count down, the sixth request is 429 with Retry-After, another token goes on', async (t) => {
  const user = await createTestUser(service);
  const first = await tokenFor(service, user, ['data:read']);
  const second = await tokenFor(service, user, ['data:read']);
  const conn = new KeepAliveConnection(service.url, { authorization: `Bearer ${first}` });
  t.teardown(() => conn.close());
  for (let i = 1; i <= 5; i++) {
    const res = await conn.get('/api/v1/activities/');
    t.is(res.status, 200);
    t.is(res.headers['ratelimit-limit'], '5');
    t.is(res.headers['ratelimit-remaining'], String(5 - i));
    t.is(res.headers['ratelimit-policy'], '5;w=60');
    t.true(Number(res.headers['ratelimit-reset']) > 0 && Number(res.headers['ratelimit-reset']) <= 60);
  }
  const refused = await conn.get('/api/v1/activities/');
  t.is(refused.status, 429);
  t.regex(JSON.parse(refused.body).detail, /at most 5 requests per 60 s/);
  const retry = Number(refused.headers['retry-after']);
  t.true(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  t.is(refused.headers['ratelimit-remaining'], '0');
  t.is(conn.sockets.size, 1, 'the connection is kept');

  const other = await fetch(`${service.url}/api/v1/activities/`, { headers: { authorization: `Bearer ${second}` } });
  t.is(other.status, 200, 'another token (another grant) has its own budget');
  t.is(other.headers.get('ratelimit-remaining'), '4');
  // Unauthenticated endpoints are not counted: health, discovery.
  t.is((await fetch(`${service.url}/healthz`)).headers.get('ratelimit-limit'), null);
});
