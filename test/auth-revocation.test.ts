import test, { type ExecutionContext } from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { postToken, signedIn } from './helpers/oauth.ts';
import { KeepAliveConnection, type KeepAliveResponse } from './helpers/keep-alive.ts';
import { mintAccessToken } from '../api/services/auth/tokens.ts';
import { createGrant, recordConsent } from '../db/grants.ts';
import { tokenResponse } from '../api/services/oauth/issue.ts';
import type { User } from '../db/database.ts';

/**
 * A polled page is answered from the read cache (process memory, then Redis), and a token's
 * verified signature is remembered for a minute: neither may outlive what ends a credential. A
 * revoked grant or an ended web session is refused on the very next request, on the same keep-alive
 * connection, while the page it polled is still cached.
 */

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true, env: { AUTH_FAILURE_LIMIT: '0' } }); // (refused credentials by the dozen from one address: not what this file tests)
});
test.after.always(() => service?.close());

const LIST = '/api/v1/activities/?limit=10';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A user with one activity and a trace within it (the trace's lactate shows on the list page). */
async function athlete(): Promise<{ user: User; traceId: string }> {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const start = Date.parse('2026-05-01T08:00:00Z');
  const lines = Array.from({ length: 300 }, (_, i) => `${new Date(start + i * 1000).toISOString().slice(0, 19)}Z,${150 + (i % 50)}`);
  const [source] = await uploadAndWait(
    service,
    token,
    [{ name: 'ride.csv', bytes: new TextEncoder().encode(`timestamp,power\n${lines.join('\n')}\n`) }],
    { sport: 'cycling' },
  );
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
  const trace = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-01T08:02:00Z', lactate: 1.5 });
  if (trace.status !== 201) throw new Error(JSON.stringify(trace.body));
  return { user, traceId: trace.body.id };
}

/**
 * Poll the list on `conn` until its page is cached, and prove the next answer comes from the cache:
 * a change written straight to the database (no read_version bump) is not seen.
 */
async function pollFromCache(t: ExecutionContext, conn: KeepAliveConnection, traceId: string): Promise<KeepAliveResponse> {
  const first = await conn.get(LIST);
  t.is(first.status, 200, first.body);
  t.is(JSON.parse(first.body)[0].traces[0].lactate, 1.5);
  await service.deps.db.updateTable('traces').set({ lactate: 9.9 }).where('id', '=', traceId).execute();
  const cached = await conn.get(LIST);
  t.is(cached.status, 200);
  t.is(cached.body, first.body, 'the page is served from the read cache');
  t.is((await conn.get(LIST, { 'if-none-match': first.headers.etag! })).status, 304);
  return first;
}

function assertRefused(t: ExecutionContext, res: KeepAliveResponse, detail: RegExp) {
  t.is(res.status, 401);
  t.regex(String(res.headers['www-authenticate']), /^Bearer error="invalid_token"/);
  t.regex(JSON.parse(res.body).detail, detail);
}

test('revoking an access token (RFC 7009) refuses the very next poll on the same connection, page cached or not', async (t) => {
  const { user, traceId } = await athlete();
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read'], app.id);
  const conn = new KeepAliveConnection(service.url, bearer(appToken));
  t.teardown(() => conn.close());
  const page = await pollFromCache(t, conn, traceId);

  const revoked = await postToken(
    service.url,
    { token: appToken, token_type_hint: 'access_token', client_id: app.id },
    { path: '/api/v1/oauth/revoke' },
  );
  t.is(revoked.status, 200);
  assertRefused(t, await conn.get(LIST), /revoked/);
  assertRefused(t, await conn.get(LIST, { 'if-none-match': page.headers.etag! }), /revoked/);
  assertRefused(t, await conn.get('/api/v1/activities/latest'), /revoked/);
  t.is(conn.sockets.size, 1, 'one keep-alive connection throughout');
});

test('revoking a connected application in Settings refuses its very next poll on the same connection', async (t) => {
  const { user, traceId } = await athlete();
  const web = await signedIn(service, user);
  const app = await createTestApplication(service, await createTestUser(service), { name: 'Coach Bot' });
  await recordConsent(service.deps.db, user.id, app.id, ['data:read']);
  const { grant } = await createGrant(service.deps.db, {
    user_id: user.id,
    application_id: app.id,
    scopes: ['data:read'],
    withRefreshToken: true,
  });
  const conn = new KeepAliveConnection(service.url, bearer((await tokenResponse(service.deps.tokens, grant)).access_token));
  t.teardown(() => conn.close());
  await pollFromCache(t, conn, traceId);

  const res = await web.postForm(`/settings/connections/${app.id}/revoke`, {});
  t.is(res.status, 303);
  assertRefused(t, await conn.get(LIST), /revoked/);
  t.is(conn.sockets.size, 1);
});

test('signing out refuses the session cookie on its very next request on the same connection, page cached or not', async (t) => {
  const { user, traceId } = await athlete();
  const web = await signedIn(service, user);
  const conn = new KeepAliveConnection(service.url, { cookie: web.cookieHeader });
  t.teardown(() => conn.close());
  await pollFromCache(t, conn, traceId);

  const out = await web.postForm('/signout', {});
  t.is(out.status, 303);
  assertRefused(t, await conn.get(LIST), /session has ended/);
  t.is(conn.sockets.size, 1);
});

test('under concurrent polling, every request sent after the revocation was answered is refused', async (t) => {
  const { user } = await athlete();
  const app = await createTestApplication(service, user);
  const appToken = await tokenFor(service, user, ['data:read'], app.id);
  const conns = Array.from({ length: 6 }, () => new KeepAliveConnection(service.url, bearer(appToken)));
  t.teardown(() => conns.forEach((c) => c.close()));
  let revokedAt = Infinity;
  const log: { conn: number; sentAt: number; status: number }[] = [];
  const until = { after: 0 };
  const pollers = conns.map(async (conn, i) => {
    // Each loop keeps polling until it has had 5 answers to requests sent after the revocation.
    while (log.filter((r) => r.conn === i && r.sentAt > revokedAt).length < 5 && until.after < 1000) {
      const sentAt = performance.now();
      const { status } = await conn.get(LIST);
      log.push({ conn: i, sentAt, status });
      if (sentAt > revokedAt) until.after++;
    }
  });
  const deadline = Date.now() + 30_000;
  while (log.filter((r) => r.status === 200).length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const res = await postToken(
    service.url,
    { token: appToken, token_type_hint: 'access_token', client_id: app.id },
    { path: '/api/v1/oauth/revoke' },
  );
  revokedAt = performance.now();
  t.is(res.status, 200);
  await Promise.all(pollers);

  const after = log.filter((r) => r.sentAt > revokedAt);
  t.true(after.length >= 30);
  t.deepEqual([...new Set(after.map((r) => r.status))], [401], 'no request sent after the revocation was answered 200');
  t.true(log.filter((r) => r.sentAt < revokedAt).every((r) => r.status === 200 || r.status === 401));
  t.true(conns.every((c) => c.sockets.size === 1));
});

test('requests checked together are each answered for their own credential', async (t) => {
  const { user } = await athlete();
  const other = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const otherApp = await createTestApplication(service, user);
  const { grant } = await createGrant(service.deps.db, {
    user_id: user.id,
    application_id: app.id,
    scopes: ['data:read'],
    withRefreshToken: false,
  });
  const { grant: othersGrant } = await createGrant(service.deps.db, {
    user_id: other.id,
    application_id: app.id,
    scopes: ['data:read'],
    withRefreshToken: false,
  });
  const { grant: revokedGrant } = await createGrant(service.deps.db, {
    user_id: user.id,
    application_id: otherApp.id,
    scopes: ['data:read'],
    withRefreshToken: false,
  });
  const live = await tokenFor(service, user, ['data:read'], app.id);
  const personal = await tokenFor(service, user, ['data:read']);
  const revoked = (await tokenResponse(service.deps.tokens, revokedGrant)).access_token;
  await service.deps.db.deleteFrom('grants').where('id', '=', revokedGrant.id).execute();
  const mint = async (claims: { sub: string; aud?: string; gid?: string; sid?: string }) =>
    (await mintAccessToken(service.deps.tokens, { scopes: ['data:read'], ...claims })).token;
  const signedInWeb = await signedIn(service, user);
  const signedOutWeb = await signedIn(service, user);
  const endedCookie = signedOutWeb.cookieHeader;
  t.is((await signedOutWeb.postForm('/signout', {})).status, 303);

  const cases: [string, Record<string, string>, number][] = [
    ["an application's live grant", bearer(live), 200],
    ['a personal token', bearer(personal), 200],
    ['a live web session', { cookie: signedInWeb.cookieHeader }, 200],
    ['a revoked grant', bearer(revoked), 401],
    ["another user's grant", bearer(await mint({ sub: user.id, aud: app.id, gid: othersGrant.id })), 401],
    ["the grant's user, another client", bearer(await mint({ sub: user.id, aud: otherApp.id, gid: grant.id })), 401],
    ['a grant of an application, presented as a personal token', bearer(await mint({ sub: user.id, gid: grant.id })), 401],
    ['an ended web session', { cookie: endedCookie }, 401],
    [
      "another user's session",
      bearer(
        await mint({
          sub: other.id,
          sid: JSON.parse(Buffer.from(signedInWeb.cookies.get('token')!.split('.')[1]!, 'base64url').toString()).sid,
        }),
      ),
      401,
    ],
    ['a grant id that is no grant', bearer(await mint({ sub: user.id, gid: '00000000-0000-4000-8000-000000000000' })), 401],
  ];
  for (let round = 0; round < 5; round++) {
    const answers = await Promise.all(cases.map(([, headers]) => fetch(service.url + LIST, { headers })));
    for (const [i, [what, , status]] of cases.entries()) t.is(answers[i]!.status, status, `${what} (round ${round})`);
  }
});

test.serial("a remembered verification still checks the token's expiry", async (t) => {
  const user = await createTestUser(service);
  const conn = new KeepAliveConnection(service.url, bearer(await tokenFor(service, user, ['data:read'])));
  t.teardown(() => conn.close());
  t.is((await conn.get(LIST)).status, 200);
  t.is((await conn.get(LIST)).status, 200);
  service.clock.advance(15 * 60_000 + 1000);
  try {
    assertRefused(t, await conn.get(LIST), /expired/);
  } finally {
    service.clock.advance(-(15 * 60_000 + 1000));
  }
});

test.serial('a remembered verification ends with its signing key', async (t) => {
  const user = await createTestUser(service);
  const conn = new KeepAliveConnection(service.url, bearer(await tokenFor(service, user, ['data:read'])));
  t.teardown(() => conn.close());
  t.is((await conn.get(LIST)).status, 200);
  const { kid: oldKid } = await service.deps.keys.signingKey();
  await service.deps.keys.rotate();
  t.is((await conn.get(LIST)).status, 200, 'a retired key still verifies');
  await service.deps.db.deleteFrom('signing_keys').where('kid', '=', oldKid).execute();
  await service.deps.keys.reload();
  assertRefused(t, await conn.get(LIST), /unknown signing key/);
});
