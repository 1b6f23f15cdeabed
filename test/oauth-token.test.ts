import test from 'ava';
import { decodeJwt } from 'jose';
import * as oidc from 'openid-client';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';
import { authorizeAndDecide, getJson, pkcePair, postToken, signedIn } from './helpers/oauth.ts';
import { createClientSecret } from '../db/applications.ts';
import { sha256 } from '../lib/secrets.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const REDIRECT = 'https://app.example/callback';

async function setup(opts: { secret?: boolean } = {}) {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user, { redirect_uris: [REDIRECT] });
  const secret = opts.secret ? (await createClientSecret(service.deps.db, app.id, 'test')).secret : undefined;
  const web = await signedIn(service, user);
  return { user, app, secret, web };
}

test('authorization code with PKCE → tokens → userinfo → refresh', async (t) => {
  const { user, app, web } = await setup();
  const { verifier, challenge } = pkcePair();
  const back = await authorizeAndDecide(web, {
    response_type: 'code',
    client_id: app.id,
    redirect_uri: REDIRECT,
    scope: 'profile data:read offline_access',
    state: 'xyz',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  t.is(back.origin + back.pathname, REDIRECT);
  t.is(back.searchParams.get('state'), 'xyz');
  t.is(back.searchParams.get('iss'), service.url);
  const code = back.searchParams.get('code')!;
  t.truthy(code);
  const stored = await service.deps.db.selectFrom('authorization_codes').selectAll().executeTakeFirst();
  t.not(stored?.code_hash, code);

  const res = await postToken(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: app.id,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.headers.get('cache-control'), 'no-store');
  t.is(res.body.token_type, 'Bearer');
  t.is(res.body.expires_in, 900);
  t.is(res.body.scope, 'profile data:read offline_access');
  const claims = decodeJwt(res.body.access_token as string);
  t.is(claims.aud, app.id);
  t.is(claims.sub, user.id);
  t.deepEqual(claims.scopes, ['profile', 'data:read', 'offline_access']);
  const refresh = res.body.refresh_token as string;
  const grant = await service.deps.db.selectFrom('grants').selectAll().where('application_id', '=', app.id).executeTakeFirstOrThrow();
  t.is(grant.refresh_token_hash, sha256(refresh));

  const info = await getJson(service.url, '/api/v1/oauth/userinfo', res.body.access_token as string);
  t.is(info.status, 200);
  t.is(info.body.sub, user.id);

  const again = await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: app.id });
  t.is(again.status, 200);
  t.is(again.body.refresh_token, refresh, 'not rotated');
  t.not(again.body.access_token, res.body.access_token);
});

/** A code for `app` approved by the signed-in user, with PKCE unless `pkce: false`. */
async function codeFor(s: Awaited<ReturnType<typeof setup>>, opts: { scope?: string; pkce?: boolean; redirect?: string } = {}) {
  const pair = pkcePair();
  const back = await authorizeAndDecide(s.web, {
    client_id: s.app.id,
    redirect_uri: opts.redirect ?? REDIRECT,
    scope: opts.scope ?? 'data:read offline_access',
    ...(opts.pkce === false ? {} : { code_challenge: pair.challenge, code_challenge_method: 'S256' }),
  });
  return { code: back.searchParams.get('code')!, verifier: pair.verifier };
}

test('confidential client: client_secret_basic and client_secret_post, no PKCE', async (t) => {
  const s = await setup({ secret: true });
  const a = await codeFor(s, { pkce: false });
  const basic = await postToken(service.url, { grant_type: 'authorization_code', code: a.code }, { basic: [s.app.id, s.secret!] });
  t.is(basic.status, 200, JSON.stringify(basic.body));
  const b = await codeFor(s, { pkce: false });
  const post = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: b.code,
    client_id: s.app.id,
    client_secret: s.secret!,
  });
  t.is(post.status, 200, JSON.stringify(post.body));
  // The refresh token with the secret, and at the second token path.
  const refreshed = await postToken(
    service.url,
    { grant_type: 'refresh_token', refresh_token: post.body.refresh_token as string },
    { basic: [s.app.id, s.secret!], path: '/oauth/token' },
  );
  t.is(refreshed.status, 200);
  const last = await service.deps.db
    .selectFrom('client_secrets')
    .select('last_used_at')
    .where('application_id', '=', s.app.id)
    .executeTakeFirstOrThrow();
  t.truthy(last.last_used_at);
});

test('a wrong client secret is 401 invalid_client with a Basic challenge; an empty one counts as absent', async (t) => {
  const s = await setup({ secret: true });
  const a = await codeFor(s, { pkce: false });
  const bad = await postToken(service.url, { grant_type: 'authorization_code', code: a.code }, { basic: [s.app.id, 'tds_cs_wrong'] });
  t.is(bad.status, 401);
  t.is(bad.body.error, 'invalid_client');
  t.regex(bad.headers.get('www-authenticate')!, /^Basic/);
  t.is(bad.headers.get('cache-control'), 'no-store');
  const unknown = await postToken(service.url, { grant_type: 'authorization_code', code: a.code, client_id: 'nope' });
  t.is(unknown.status, 401);
  // Without PKCE and without a secret (empty client_secret=) the client is not authenticated.
  const none = await postToken(service.url, { grant_type: 'authorization_code', code: a.code, client_id: s.app.id, client_secret: '' });
  t.is(none.status, 401);
  t.is(none.body.error, 'invalid_client');
  // The failed attempts did not burn the code.
  const ok = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: a.code,
    client_id: s.app.id,
    client_secret: s.secret!,
  });
  t.is(ok.status, 200);
});

test('an application with a secret: a PKCE code needs no secret (SPEC), but a refresh token from a code exchanged with the secret needs the secret', async (t) => {
  const s = await setup({ secret: true });
  // Its mobile part: PKCE and client_id alone, as the API allows; that grant's refresh token is public.
  const pkce = await codeFor(s, { scope: 'data:read offline_access' });
  const mobile = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: pkce.code,
    client_id: s.app.id,
    code_verifier: pkce.verifier,
  });
  t.is(mobile.status, 200, JSON.stringify(mobile.body));
  t.is(
    (await postToken(service.url, { grant_type: 'refresh_token', refresh_token: mobile.body.refresh_token as string, client_id: s.app.id }))
      .status,
    200,
  );

  // Its server part: the code exchanged with the secret; that grant's refresh token needs the secret.
  const server = await codeFor(s, { scope: 'data:read offline_access' });
  const ok = await postToken(
    service.url,
    { grant_type: 'authorization_code', code: server.code, code_verifier: server.verifier },
    { basic: [s.app.id, s.secret!] },
  );
  t.is(ok.status, 200, JSON.stringify(ok.body));
  const refresh = ok.body.refresh_token as string;
  const refused = [
    await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: s.app.id }),
    await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: s.app.id, client_secret: '' }),
    await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh }, { basic: [s.app.id, ''] }),
  ];
  for (const res of refused) {
    t.is(res.status, 401, JSON.stringify(res.body));
    t.is(res.body.error, 'invalid_client');
    t.regex(res.body.error_description as string, /client secret/);
    t.regex(res.headers.get('www-authenticate')!, /^Basic/);
  }
  t.is(
    (await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: s.app.id, client_secret: 'wrong' }))
      .status,
    401,
  );
  t.is(
    (await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: s.app.id, client_secret: s.secret! }))
      .status,
    200,
  );
  t.is(
    (await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh }, { basic: [s.app.id, s.secret!] })).status,
    200,
  );
  // A code without PKCE takes only the secret.
  const plain = await codeFor(s, { scope: 'data:read', pkce: false });
  t.is((await postToken(service.url, { grant_type: 'authorization_code', code: plain.code, client_id: s.app.id })).status, 401);
});

test("openid-client: an application with a secret, as a public client (PKCE) and as a confidential one; the confidential grant's refresh token needs the secret", async (t) => {
  const s = await setup({ secret: true });
  const insecure = { execute: [oidc.allowInsecureRequests] };
  const asPublic = await oidc.discovery(new URL(service.url), s.app.id, undefined, oidc.None(), insecure);
  const asConfidential = await oidc.discovery(new URL(service.url), s.app.id, undefined, oidc.ClientSecretBasic(s.secret!), insecure);
  const login = async (config: oidc.Configuration) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'data:read offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const back = await authorizeAndDecide(s.web, Object.fromEntries(url.searchParams));
    return oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier });
  };
  // A secret is not needed when PKCE is used; that grant refreshes as a public client.
  const mobile = await login(asPublic);
  t.truthy((await oidc.refreshTokenGrant(asPublic, mobile.refresh_token!)).access_token);
  // Exchanged with the secret: without it the refresh token is refused (401 invalid_client with a
  // Basic challenge, docs/app-developers.md, which the library reports as a challenge error).
  const server = await login(asConfidential);
  const refused = await t.throwsAsync(oidc.refreshTokenGrant(asPublic, server.refresh_token!));
  t.true(refused instanceof oidc.WWWAuthenticateChallengeError);
  t.is((refused as oidc.WWWAuthenticateChallengeError).status, 401);
  t.is((refused as oidc.WWWAuthenticateChallengeError).cause[0]!.scheme, 'basic');
  t.truthy((await oidc.refreshTokenGrant(asConfidential, server.refresh_token!)).access_token);
});

test('a replayed code fails and revokes the tokens issued from it', async (t) => {
  const s = await setup();
  const { code, verifier } = await codeFor(s);
  const first = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: verifier });
  t.is(first.status, 200);
  t.is(
    (await getJson(service.url, '/api/v1/oauth/userinfo', first.body.access_token as string)).status,
    403,
    'valid token, no profile scope',
  );
  const replay = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: verifier });
  t.is(replay.status, 400);
  t.is(replay.body.error, 'invalid_grant');
  t.regex(replay.body.error_description as string, /already been used/);
  // Both tokens of the first exchange are dead.
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', first.body.access_token as string)).status, 401);
  const refresh = await postToken(service.url, {
    grant_type: 'refresh_token',
    refresh_token: first.body.refresh_token as string,
    client_id: s.app.id,
  });
  t.is(refresh.body.error, 'invalid_grant');
});

test('concurrent exchanges of one code: exactly one succeeds', async (t) => {
  const s = await setup();
  const { code, verifier } = await codeFor(s);
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: verifier }),
    ),
  );
  t.is(results.filter((r) => r.status === 200).length, 1);
  t.is(results.filter((r) => r.body.error === 'invalid_grant').length, 4);
});

test('PKCE: a wrong or missing verifier is invalid_grant', async (t) => {
  const s = await setup();
  const { code, verifier } = await codeFor(s);
  const wrong = await postToken(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: s.app.id,
    code_verifier: pkcePair().verifier,
  });
  t.is(wrong.body.error, 'invalid_grant');
  t.regex(wrong.body.error_description as string, /code_challenge/);
  const missing = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id });
  t.is(missing.body.error, 'invalid_grant');
  const short = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: 'abc' });
  t.is(short.body.error, 'invalid_grant');
  t.is(
    (await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: verifier })).status,
    200,
  );
});

test.serial('a code presented by another client, with another redirect_uri, or after 60 s fails', async (t) => {
  const s = await setup();
  const other = await createTestApplication(service, s.user, { redirect_uris: [REDIRECT] });
  const { code, verifier } = await codeFor(s);
  const stolen = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: other.id, code_verifier: verifier });
  t.is(stolen.status, 400);
  t.is(stolen.body.error, 'invalid_grant');
  t.regex(stolen.body.error_description as string, /another client/);
  const redirect = await postToken(service.url, {
    grant_type: 'authorization_code',
    code,
    client_id: s.app.id,
    code_verifier: verifier,
    redirect_uri: 'https://app.example/other',
  });
  t.is(redirect.body.error, 'invalid_grant');

  const late = await codeFor(s);
  service.clock.advance(61_000);
  try {
    const expired = await postToken(service.url, {
      grant_type: 'authorization_code',
      code: late.code,
      client_id: s.app.id,
      code_verifier: late.verifier,
    });
    t.is(expired.body.error, 'invalid_grant');
    t.regex(expired.body.error_description as string, /expired/);
  } finally {
    service.clock.advance(-61_000);
  }
  // The original code still works for its own client.
  t.is(
    (await postToken(service.url, { grant_type: 'authorization_code', code, client_id: s.app.id, code_verifier: verifier })).status,
    200,
  );
});

test('refresh tokens: only with offline_access, bound to their client, scope may narrow but not widen', async (t) => {
  const s = await setup();
  const other = await createTestApplication(service, s.user, { redirect_uris: [REDIRECT] });
  const noOffline = await codeFor(s, { scope: 'data:read' });
  const plain = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: noOffline.code,
    client_id: s.app.id,
    code_verifier: noOffline.verifier,
  });
  t.is(plain.status, 200);
  t.false('refresh_token' in plain.body);

  const a = await codeFor(s, { scope: 'data:read profile offline_access' });
  const tokens = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: a.code,
    client_id: s.app.id,
    code_verifier: a.verifier,
  });
  const refresh = tokens.body.refresh_token as string;
  const foreign = await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh, client_id: other.id });
  t.is(foreign.body.error, 'invalid_grant');
  const noClient = await postToken(service.url, { grant_type: 'refresh_token', refresh_token: refresh });
  t.is(noClient.body.error, 'invalid_request');
  const narrow = await postToken(service.url, {
    grant_type: 'refresh_token',
    refresh_token: refresh,
    client_id: s.app.id,
    scope: 'data:read',
  });
  t.is(narrow.status, 200);
  t.is(narrow.body.scope, 'data:read');
  const wide = await postToken(service.url, {
    grant_type: 'refresh_token',
    refresh_token: refresh,
    client_id: s.app.id,
    scope: 'data:read data:write',
  });
  t.is(wide.body.error, 'invalid_scope');
  const garbage = await postToken(service.url, { grant_type: 'refresh_token', refresh_token: 'tds_rt_nothing', client_id: s.app.id });
  t.is(garbage.body.error, 'invalid_grant');
});

test('malformed token requests get RFC 6749 errors', async (t) => {
  const s = await setup();
  t.is((await postToken(service.url, { client_id: s.app.id })).body.error, 'invalid_request');
  const unsupported = await postToken(service.url, { grant_type: 'password', client_id: s.app.id });
  t.is(unsupported.status, 400);
  t.is(unsupported.body.error, 'unsupported_grant_type');
  t.is((await postToken(service.url, { grant_type: 'authorization_code', client_id: s.app.id })).body.error, 'invalid_request');
  const json = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'refresh_token' }),
  });
  t.is(json.status, 400);
  t.is(((await json.json()) as { error: string }).error, 'invalid_request');
  const repeated = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=refresh_token&refresh_token=a&refresh_token=b',
  });
  t.is(((await repeated.json()) as { error: string }).error, 'invalid_request');
  const both = await postToken(
    service.url,
    { grant_type: 'refresh_token', refresh_token: 'x', client_secret: 'y' },
    { basic: [s.app.id, 'z'] },
  );
  t.is(both.body.error, 'invalid_request');
});

test('revocation (RFC 7009): revoking the refresh token or an access token ends the grant', async (t) => {
  const s = await setup();
  const a = await codeFor(s, { scope: 'profile offline_access' });
  const tokens = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: a.code,
    client_id: s.app.id,
    code_verifier: a.verifier,
  });
  // Another client cannot revoke it (200, nothing happens).
  const other = await createTestApplication(service, s.user);
  const foreign = await postToken(
    service.url,
    { token: tokens.body.refresh_token as string, client_id: other.id },
    { path: '/api/v1/oauth/revoke' },
  );
  t.is(foreign.status, 200);
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', tokens.body.access_token as string)).status, 200);
  // Unknown tokens are fine.
  t.is((await postToken(service.url, { token: 'nonsense', client_id: s.app.id }, { path: '/api/v1/oauth/revoke' })).status, 200);
  // The client revokes its access token: the refresh token goes too.
  const res = await postToken(
    service.url,
    { token: tokens.body.access_token as string, token_type_hint: 'access_token', client_id: s.app.id },
    { path: '/oauth/revoke' },
  );
  t.is(res.status, 200);
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', tokens.body.access_token as string)).status, 401);
  t.is(
    (await postToken(service.url, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string, client_id: s.app.id }))
      .body.error,
    'invalid_grant',
  );

  const b = await codeFor(s, { scope: 'profile offline_access' });
  const second = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: b.code,
    client_id: s.app.id,
    code_verifier: b.verifier,
  });
  t.is(
    (await postToken(service.url, { token: second.body.refresh_token as string, client_id: s.app.id }, { path: '/api/v1/oauth/revoke' }))
      .status,
    200,
  );
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', second.body.access_token as string)).status, 401);
});

test('revocation of a grant made with the client secret needs the secret (RFC 7009 §2.1); without it 401 and the grant stands', async (t) => {
  const s = await setup({ secret: true });
  const a = await codeFor(s, { scope: 'profile offline_access' });
  const tokens = await postToken(
    service.url,
    { grant_type: 'authorization_code', code: a.code, code_verifier: a.verifier },
    { basic: [s.app.id, s.secret!] },
  );
  t.is(tokens.status, 200);
  const bare = await postToken(
    service.url,
    { token: tokens.body.refresh_token as string, client_id: s.app.id },
    { path: '/api/v1/oauth/revoke' },
  );
  t.is(bare.status, 401);
  t.is(bare.body.error, 'invalid_client');
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', tokens.body.access_token as string)).status, 200, 'not revoked');
  const ok = await postToken(
    service.url,
    { token: tokens.body.refresh_token as string },
    { path: '/api/v1/oauth/revoke', basic: [s.app.id, s.secret!] },
  );
  t.is(ok.status, 200);
  t.is((await getJson(service.url, '/api/v1/oauth/userinfo', tokens.body.access_token as string)).status, 401, 'revoked');
});
