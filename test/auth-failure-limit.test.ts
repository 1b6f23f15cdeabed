/**
 * Failed credentials are rate limited per client address (api/http/failure-limit.ts; TRUST_PROXY, so
 * each request's address is its X-Forwarded-For): the token endpoint's refused requests and bearer
 * tokens that are not ours, with RateLimit headers; successes never count, and another address (an
 * IPv6 client is its /64) is another budget.
 */
import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser } from './helpers/users.ts';
import { createPersonalToken } from '../api/services/oauth/issue.ts';

const LIMIT = 5;
let service: TestService;
test.before(async () => {
  service = await startTestService({ env: { AUTH_FAILURE_LIMIT: String(LIMIT), AUTH_FAILURE_WINDOW_SECONDS: '600', TRUST_PROXY: 'true' } });
});
test.after.always(() => service?.close());

let n = 0;
const address = () => `198.51.100.${++n}`;

function refresh(from: string, refreshToken: string) {
  return fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': from },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
}
const list = (from: string, token: string) =>
  fetch(`${service.url}/api/v1/activities/`, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': from } });

async function personal() {
  const user = await createTestUser(service);
  return (await createPersonalToken(service.deps.db, service.deps.tokens, user.id, ['data:read'], 'limit test')).response;
}

const rateHeaders = (res: Response) => ({
  policy: res.headers.get('ratelimit-policy'),
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: Number(res.headers.get('ratelimit-reset')),
});

test('the token endpoint: refused requests count per address, past the limit 429 slow_down for every request from it; other addresses and successes are not affected', async (t) => {
  const { refresh_token: good } = await personal();
  const attacker = address();
  for (let i = 0; i < LIMIT; i++) {
    const res = await refresh(attacker, `guess-${i}`);
    t.is(res.status, 400);
    t.is(((await res.json()) as { error: string }).error, 'invalid_grant');
    const h = rateHeaders(res);
    t.like(h, { policy: `${LIMIT};w=600`, limit: String(LIMIT), remaining: String(LIMIT - 1 - i) });
    t.true(h.reset > 0 && h.reset <= 600);
  }
  const refused = await refresh(attacker, good!);
  t.is(refused.status, 429, 'even a valid refresh token, from the address past its budget');
  t.like(await refused.json(), { error: 'slow_down' });
  t.true(Number(refused.headers.get('retry-after')) > 0);
  t.is(refused.headers.get('ratelimit-remaining'), '0');
  t.is(refused.headers.get('cache-control'), 'no-store');

  const owner = address();
  const ok = await refresh(owner, good!);
  t.is(ok.status, 200, "the token's owner, from another address");
  t.like(rateHeaders(ok), { limit: String(LIMIT), remaining: String(LIMIT) });
  for (let i = 0; i < LIMIT * 2; i++) t.is((await refresh(owner, good!)).status, 200, 'successes never count');
});

test('bearer tokens that are not ours count per address: 401 with RateLimit headers, then 429; a valid token still answers, from there and elsewhere', async (t) => {
  const { access_token: valid } = await personal();
  const from = address();
  for (let i = 0; i < LIMIT; i++) {
    const res = await list(from, i % 2 ? `not.a.${i}` : `${valid.slice(0, -4)}AAAA`);
    t.is(res.status, 401);
    t.is(res.headers.get('ratelimit-remaining'), String(LIMIT - 1 - i));
  }
  const over = await list(from, 'garbage');
  t.is(over.status, 429);
  t.true(Number(over.headers.get('retry-after')) > 0);
  t.regex(((await over.json()) as { detail: string }).detail, /Too many failed credentials from this address/);
  t.is((await list(from, valid)).status, 200, 'a token that checks is never slowed');
  t.is((await list(address(), 'garbage')).status, 401, 'another address has its own budget');
});

test('an IPv6 client is its /64: failures from many addresses of one prefix share a budget', async (t) => {
  const prefix = '2001:db8:77:1';
  for (let i = 1; i <= LIMIT; i++) t.is((await list(`${prefix}::${i.toString(16)}`, 'garbage')).status, 401);
  t.is((await list(`${prefix}:ffff:ffff:ffff:ffff`, 'garbage')).status, 429);
  t.is((await list('2001:db8:77:2::1', 'garbage')).status, 401);
});

test.serial('an expired token of ours is not a failure: its client refreshes', async (t) => {
  const { access_token: old } = await personal();
  service.clock.advance(20 * 60 * 1000);
  const from = address();
  for (let i = 0; i < LIMIT + 3; i++) {
    const res = await list(from, old);
    t.is(res.status, 401);
    t.is(res.headers.get('ratelimit-remaining'), null);
  }
});
