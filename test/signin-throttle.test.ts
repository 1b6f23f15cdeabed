/**
 * Sign-in and sign-up throttling as clients at different addresses see it (TRUST_PROXY, so each
 * request's address is its X-Forwarded-For).
 */
import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { WebClient } from './helpers/http.ts';
import { TEST_PASSWORD, createTestUser } from './helpers/users.ts';

const MAX = 3;
let service: TestService;
test.before(async () => {
  service = await startTestService({ env: { SIGNIN_MAX_FAILURES: String(MAX), TRUST_PROXY: 'true' } });
});
test.after.always(() => service?.close());

let n = 0;
/** A fresh address (documentation range) for each client. */
const address = () => `203.0.113.${++n}`;

function signIn(ip: string, email: string, password: string) {
  return new WebClient(service.url).postForm('/signin', { email, password }, { headers: { 'x-forwarded-for': ip } });
}

test('failures from one address lock that address for the account, not the account for its owner', async (t) => {
  const victim = await createTestUser(service);
  const attacker = address();
  for (let i = 0; i < MAX; i++) t.is((await signIn(attacker, victim.email, `guess ${i} password`)).status, 401);
  const locked = await signIn(attacker, victim.email, TEST_PASSWORD);
  t.is(locked.status, 429);
  const retry = Number(locked.headers.get('retry-after'));
  t.true(retry > 0 && retry <= 900, String(retry));
  t.regex(await locked.text(), /Too many failed sign-ins/);
  t.is(locked.headers.getSetCookie().length, 0, 'the right password is refused from the locked address');
  // The owner, from their own address, signs in.
  const owner = await signIn(address(), victim.email, TEST_PASSWORD);
  t.is(owner.status, 303);
  t.true(owner.headers.getSetCookie().some((c) => c.startsWith('token=')));
  // The attacker's address may still sign in to another account (below the per-address limit).
  const other = await createTestUser(service);
  t.is((await signIn(attacker, other.email, TEST_PASSWORD)).status, 303);
});

test('failures spread over many accounts throttle the address, for every account', async (t) => {
  const sprayer = address();
  for (let i = 0; i < MAX * 4; i++) t.is((await signIn(sprayer, `nobody${i}-${n}@example.com`, 'password123!')).status, 401);
  const user = await createTestUser(service);
  const throttled = await signIn(sprayer, user.email, TEST_PASSWORD);
  t.is(throttled.status, 429);
  t.true(Number(throttled.headers.get('retry-after')) > 0);
  t.is((await signIn(address(), user.email, TEST_PASSWORD)).status, 303);
});

test('a success clears the count of its address and account', async (t) => {
  const user = await createTestUser(service);
  const ip = address();
  for (let i = 0; i < MAX - 1; i++) t.is((await signIn(ip, user.email, 'wrong password!')).status, 401);
  t.is((await signIn(ip, user.email, TEST_PASSWORD)).status, 303);
  for (let i = 0; i < MAX - 1; i++) t.is((await signIn(ip, user.email, 'wrong password!')).status, 401);
  t.is((await signIn(ip, user.email, TEST_PASSWORD)).status, 303);
});

test('sign-up tells that an email has an account (409) but is throttled per address with Retry-After', async (t) => {
  const existing = await createTestUser(service);
  const ip = address();
  const signUp = (email: string, from = ip) =>
    new WebClient(service.url).postForm(
      '/signup',
      { first_name: 'Ada', last_name: 'Lovelace', email, password: 'a long enough passphrase' },
      { headers: { 'x-forwarded-for': from } },
    );
  const duplicate = await signUp(existing.email);
  t.is(duplicate.status, 409);
  t.regex(await duplicate.text(), /already exists/);
  t.is((await signUp(`new-${n}@example.com`)).status, 303);
  for (let i = 2; i < MAX * 4; i++) t.is((await signUp(existing.email)).status, 409);
  const throttled = await signUp(`later-${n}@example.com`);
  t.is(throttled.status, 429);
  const retry = Number(throttled.headers.get('retry-after'));
  t.true(retry > 0 && retry <= 900, String(retry));
  t.regex(await throttled.text(), /Too many sign-ups/);
  t.is(await service.deps.db.selectFrom('users').select('id').where('email', '=', `later-${n}@example.com`).executeTakeFirst(), undefined);
  // Invalid forms are not counted; another address is not affected.
  t.is((await signUp(existing.email, address())).status, 409);
});

test('an IPv6 client is its /64: failures from many addresses of one prefix count together; another prefix is another client', async (t) => {
  const user = await createTestUser(service);
  const prefix = `2001:db8:${(++n).toString(16)}:1`;
  // Each attempt from a new address of the same /64, written in the forms clients and proxies use.
  const inPrefix = [`${prefix}::1`, `${prefix}:0:0:0:2`, `${prefix}:aaaa:bbbb:cccc:dddd`, `${prefix}::4`];
  for (let i = 0; i < MAX; i++) t.is((await signIn(inPrefix[i]!, user.email, `guess ${i} password`)).status, 401);
  t.is(
    (await signIn(`${prefix}:ffff::9`, user.email, TEST_PASSWORD)).status,
    429,
    'the right password from a fourth address of the prefix is refused',
  );
  t.is((await signIn(`2001:db8:${n.toString(16)}:2::1`, user.email, TEST_PASSWORD)).status, 303, 'the next /64 signs in');
});
