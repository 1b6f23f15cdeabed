import test from 'ava';
import { findUserByEmail } from '../db/users.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { WebClient, signUp } from './helpers/http.ts';
import { TEST_PASSWORD, createTestUser } from './helpers/users.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ env: { SIGNIN_MAX_FAILURES: '3' } });
});
test.after.always(() => service?.close());

let n = 0;
const email = () => `person${++n}-${Date.now()}@example.com`;
const PASSWORD = 'a long enough passphrase';

test('sign-up creates the account, stores a salted scrypt hash and starts a session', async (t) => {
  const web = new WebClient(service.url);
  const address = email();
  const res = await signUp(web, { email: address.toUpperCase(), password: PASSWORD });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/', 'lands on home');
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('token='))!;
  t.regex(cookie, /httponly/i);
  t.regex(cookie, /samesite=lax/i);
  t.regex(cookie, /path=\//i);

  const user = await findUserByEmail(service.deps.db, address);
  t.is(user?.email, address, 'stored lower-cased');
  t.regex(user!.password_hash, /^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.false(user!.password_hash.includes(PASSWORD));

  // The same password for another user gets another salt, so another hash.
  const other = new WebClient(service.url);
  const otherAddress = email();
  await signUp(other, { email: otherAddress, password: PASSWORD });
  const second = await findUserByEmail(service.deps.db, otherAddress);
  t.regex(second!.password_hash, /^scrypt\$15\$/);
  t.not(second!.password_hash.split('$')[4], user!.password_hash.split('$')[4], 'another salt');
  t.not(second!.password_hash, user!.password_hash);

  // The session cookie authenticates the settings page and the API.
  const settings = await web.get('/settings');
  t.is(settings.status, 200);
  t.regex(await settings.text(), new RegExp(address.replace(/[.+]/g, '\\$&')));
  const me = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { cookie: web.cookieHeader } });
  t.is(me.status, 200);
  t.is(((await me.json()) as { email: string }).email, address);
});

test('the home page links to sign-in, or, once signed in, greets the person, links their settings and loads their training', async (t) => {
  const anonymous = await (await new WebClient(service.url).get('/')).text();
  t.regex(anonymous, /href="\/signin"/);
  t.regex(anonymous, /href="\/docs"/);
  const user = await createTestUser(service, { first_name: 'Dorothy', last_name: 'Vaughan' });
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const signedIn = await (await web.get('/')).text();
  t.regex(signedIn, /<h1>Hello, Dorothy<\/h1>/);
  t.regex(signedIn, /<a href="\/settings" class="account" id="header-account">Dorothy Vaughan<\/a>/);
  t.regex(signedIn, /<script type="module" src="\/static\/home\.js"><\/script>/);
});

test('a repeated form field counts once, as its first value', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const body = 'first_name=Ann&first_name=Other&last_name=Lee';
  const res = await fetch(`${service.url}/settings/profile`, {
    method: 'POST',
    headers: { cookie: web.cookieHeader, origin: service.url, 'content-type': 'application/x-www-form-urlencoded' },
    body,
    redirect: 'manual',
  });
  t.is(res.status, 303);
  t.regex(await (await web.get('/settings')).text(), /id="account-name">Ann Lee</);
});

test('a duplicate email gets a clear form error, whatever its case', async (t) => {
  const address = email();
  await signUp(new WebClient(service.url), { email: address, password: PASSWORD });
  const res = await signUp(new WebClient(service.url), { email: address.toUpperCase(), password: PASSWORD });
  t.is(res.status, 409);
  t.regex(await res.text(), /An account with this email already exists/);
  t.is(res.headers.getSetCookie().length, 0);
});

test('weak passwords and bad fields get form errors and create nothing', async (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ password: 'short' }, /at least 10 characters/],
    [{ password: 'aaaaaaaaaaaaaa' }, /at least 5 different characters/],
    [{ password: 'password123' }, /too common/],
    [{ password: 'Lovelace-rules-ok' }, /must not contain your email address or name/],
    [{ email: 'not-an-email', password: PASSWORD }, /Enter a valid email address/],
    [{ first_name: '  ', password: PASSWORD }, /First name is required/],
  ];
  for (const [fields, message] of cases) {
    const address = email();
    const res = await new WebClient(service.url).postForm('/signup', {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: address,
      ...fields,
    });
    t.is(res.status, 422, JSON.stringify(fields));
    const page = await res.text();
    t.regex(page, message);
    t.notRegex(page, /value="[^"]*passphrase/, 'the password is not echoed');
    t.is(await findUserByEmail(service.deps.db, fields.email ?? address), undefined);
  }
});

test('sign-in with the right password starts a session and honours a safe next', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  const res = await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD, next: '/settings?x=1' });
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/settings?x=1');
  t.is((await web.get('/settings')).status, 200);
});

test('next cannot redirect off-site', async (t) => {
  const user = await createTestUser(service);
  for (const next of ['//evil.example/x', 'https://evil.example', '/\\evil.example', 'javascript:alert(1)']) {
    const res = await new WebClient(service.url).postForm('/signin', { email: user.email, password: TEST_PASSWORD, next });
    t.is(res.headers.get('location'), '/', next);
  }
});

test('a wrong password or unknown email is one message, 401', async (t) => {
  const user = await createTestUser(service);
  for (const fields of [
    { email: user.email, password: 'wrong password!' },
    { email: email(), password: TEST_PASSWORD },
  ]) {
    const res = await new WebClient(service.url).postForm('/signin', fields);
    t.is(res.status, 401);
    t.regex(await res.text(), /Incorrect email or password/);
    t.is(res.headers.getSetCookie().length, 0);
  }
});

test('repeated failed sign-ins from one address are throttled for that account with Retry-After', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  for (let i = 0; i < 3; i++) t.is((await web.postForm('/signin', { email: user.email, password: `wrong ${i} password` })).status, 401);
  const blocked = await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  t.is(blocked.status, 429);
  const retry = Number(blocked.headers.get('retry-after'));
  t.true(retry > 0 && retry <= 900);
  t.regex(await blocked.text(), /Too many failed sign-ins/);
  t.is(blocked.headers.getSetCookie().length, 0, 'even the right password is refused from this address while throttled');
  // Another account is not affected.
  const other = await createTestUser(service);
  t.is((await web.postForm('/signin', { email: other.email, password: TEST_PASSWORD })).status, 303);
});

test('cross-origin form posts are refused', async (t) => {
  const user = await createTestUser(service);
  const evil = await new WebClient(service.url).postForm(
    '/signin',
    { email: user.email, password: TEST_PASSWORD },
    { origin: 'https://evil.example' },
  );
  t.is(evil.status, 403);
  const none = await new WebClient(service.url).postForm('/signin', { email: user.email, password: TEST_PASSWORD }, { origin: null });
  t.is(none.status, 403);
});

test('sign-out ends the session: its cookie no longer authenticates', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const saved = web.cookieHeader;
  const out = await web.postForm('/signout', {});
  t.is(out.status, 303);
  t.is(out.headers.get('location'), '/signin');
  t.false(web.cookies.has('token'));
  const api = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { cookie: saved } });
  t.is(api.status, 401);
  const page = await fetch(`${service.url}/settings`, { headers: { cookie: saved }, redirect: 'manual' });
  t.is(page.status, 303);
});

test('settings needs a session and sends the visitor to sign in', async (t) => {
  const res = await new WebClient(service.url).get('/settings');
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/signin?next=%2Fsettings');
});

test('settings updates the name and rejects an empty one', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const bad = await web.postForm('/settings/profile', { first_name: '', last_name: 'X' });
  t.is(bad.status, 422);
  t.regex(await bad.text(), /First name is required/);
  const ok = await web.postForm('/settings/profile', { first_name: 'Mary', last_name: 'Jackson' });
  t.is(ok.status, 303);
  t.regex(await (await web.get('/settings?saved=name')).text(), /Mary Jackson/);
});

test('changing the password needs the current one and ends other sessions', async (t) => {
  const user = await createTestUser(service);
  const a = new WebClient(service.url);
  const b = new WebClient(service.url);
  await a.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  await b.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const wrong = await a.postForm('/settings/password', { current_password: 'nope nope nope', new_password: 'a brand new passphrase' });
  t.is(wrong.status, 422);
  t.regex(await wrong.text(), /current password is not correct/);
  const ok = await a.postForm('/settings/password', { current_password: TEST_PASSWORD, new_password: 'a brand new passphrase' });
  t.is(ok.status, 303);
  t.is((await a.get('/settings')).status, 200, 'this session continues');
  t.is((await b.get('/settings')).status, 303, 'the other session ended');
  t.is((await new WebClient(service.url).postForm('/signin', { email: user.email, password: 'a brand new passphrase' })).status, 303);
});

test.serial('an expired session token is refreshed from its live session, returned in refreshed-token', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const first = web.cookies.get('token');
  service.clock.advance(16 * 60 * 1000);
  try {
    const res = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { cookie: web.cookieHeader } });
    t.is(res.status, 200);
    const refreshed = res.headers.get('refreshed-token');
    t.truthy(refreshed);
    t.not(refreshed, first);
    t.true(res.headers.getSetCookie().some((c) => c.startsWith(`token=${refreshed}`)));
    // The refreshed token works as a bearer token too, until sign-out ends the session.
    t.is((await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${refreshed}` } })).status, 200);
    web.cookies.set('token', refreshed!);
    await web.postForm('/signout', {});
    t.is((await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${refreshed}` } })).status, 401);
  } finally {
    service.clock.advance(-16 * 60 * 1000);
  }
});

test('a cookie-authenticated API write from another origin is refused', async (t) => {
  const user = await createTestUser(service);
  const web = new WebClient(service.url);
  await web.postForm('/signin', { email: user.email, password: TEST_PASSWORD });
  const res = await fetch(`${service.url}/api/v1/oauth/userinfo`, {
    method: 'POST',
    headers: { cookie: web.cookieHeader, origin: 'https://evil.example' },
  });
  t.is(res.status, 403);
  const same = await fetch(`${service.url}/api/v1/oauth/userinfo`, {
    method: 'POST',
    headers: { cookie: web.cookieHeader, origin: service.url },
  });
  t.is(same.status, 200);
});
