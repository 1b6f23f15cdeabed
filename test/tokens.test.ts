import test from 'ava';
import { createHmac, randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader, generateKeyPair, createRemoteJWKSet, jwtVerify } from 'jose';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const userinfo = (token?: string) =>
  fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

async function expect401(t: import('ava').ExecutionContext, token: string | undefined, detail?: RegExp) {
  const res = await userinfo(token);
  t.is(res.status, 401);
  t.regex(res.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/);
  const body = (await res.json()) as { detail: string };
  if (detail) t.regex(body.detail, detail);
}

test('a personal token authenticates userinfo', async (t) => {
  const user = await createTestUser(service, { first_name: 'Katherine', last_name: 'Johnson' });
  const res = await userinfo(await tokenFor(service, user, ['profile']));
  t.is(res.status, 200);
  t.deepEqual(await res.json(), {
    sub: user.id,
    name: 'Katherine Johnson',
    given_name: 'Katherine',
    family_name: 'Johnson',
    email: user.email,
    registered_at: user.created_at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
});

test('access tokens carry the documented header and claims', async (t) => {
  const user = await createTestUser(service);
  const app = await createTestApplication(service, user);
  const token = await tokenFor(service, user, ['data:read', 'profile'], app.id);
  const header = decodeProtectedHeader(token);
  t.is(header.alg, 'RS256');
  t.truthy(header.kid);
  const claims = decodeJwt(token);
  t.is(claims.iss, service.url);
  t.is(claims.sub, user.id);
  t.is(claims.aud, app.id);
  t.deepEqual(claims.scopes, ['data:read', 'profile']);
  t.is(claims.exp! - claims.iat!, 900);
  t.truthy(claims.jti);
  // And an independent verifier accepts it with our published JWKS.
  const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
  const { payload } = await jwtVerify(token, jwks, { issuer: service.url, audience: app.id });
  t.is(payload.sub, user.id);
});

test('no token, a malformed header or garbage is 401', async (t) => {
  await expect401(t, undefined, /Not authenticated/);
  await expect401(t, 'not-a-jwt');
  const res = await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: 'Basic abc' } });
  t.is(res.status, 401);
});

test('a missing scope is 403 insufficient_scope', async (t) => {
  const user = await createTestUser(service);
  const res = await userinfo(await tokenFor(service, user, ['data:read']));
  t.is(res.status, 403);
  t.is(res.headers.get('www-authenticate'), 'Bearer error="insufficient_scope", scope="profile"');
});

test.serial('an expired token is 401 (controlled clock)', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['profile']);
  t.is((await userinfo(token)).status, 200);
  service.clock.advance(15 * 60 * 1000 + 1000);
  try {
    await expect401(t, token, /expired/);
  } finally {
    service.clock.advance(-(15 * 60 * 1000 + 1000));
  }
});

test('forged tokens are refused', async (t) => {
  const user = await createTestUser(service);
  const good = await tokenFor(service, user, ['profile']);
  const claims = { ...decodeJwt(good) };
  const { kid } = decodeProtectedHeader(good);

  // alg "none"
  await expect401(t, new UnsecuredJWT(claims).encode());
  // HS256 signed with the public key as the HMAC secret (algorithm confusion)
  const jwks = (await (await fetch(`${service.url}/.well-known/jwks.json`)).json()) as { keys: { n: string }[] };
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', kid, typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const sig = createHmac('sha256', jwks.keys[0]!.n).update(`${h}.${p}`).digest('base64url');
  await expect401(t, `${h}.${p}.${sig}`);
  // a key of our own, with an unknown kid and with our kid
  const { privateKey } = await generateKeyPair('RS256');
  await expect401(t, await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'unknown-kid' }).sign(privateKey));
  await expect401(t, await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: kid! }).sign(privateKey));
  // wrong issuer, signed by us
  const { kid: k, key } = await service.deps.keys.signingKey();
  await expect401(t, await new SignJWT({ ...claims, iss: 'https://evil.example' }).setProtectedHeader({ alg: 'RS256', kid: k }).sign(key));
  // tampered payload
  const [hh, , ss] = good.split('.');
  const tampered = Buffer.from(JSON.stringify({ ...claims, scopes: ['profile', 'admin'], jti: randomUUID() })).toString('base64url');
  await expect401(t, `${hh}.${tampered}.${ss}`);
  // the untampered one still works
  t.is((await userinfo(good)).status, 200);
});

test('rotating the signing key keeps old tokens valid until they expire', async (t) => {
  const user = await createTestUser(service);
  const before = await tokenFor(service, user, ['profile']);
  const oldKid = decodeProtectedHeader(before).kid;
  const newKid = await service.deps.keys.rotate();
  t.not(newKid, oldKid);
  const after = await tokenFor(service, user, ['profile']);
  t.is(decodeProtectedHeader(after).kid, newKid);
  t.is((await userinfo(before)).status, 200);
  t.is((await userinfo(after)).status, 200);
  const kids = ((await (await fetch(`${service.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  t.true(kids.includes(oldKid!) && kids.includes(newKid));
});

test('signing keys persist: a second key store loads the same keys', async (t) => {
  const { KeyStore } = await import('../api/services/auth/keys.ts');
  const other = new KeyStore(service.deps.db, service.deps.box);
  await other.init();
  t.deepEqual((await other.jwks()).keys.map((k) => k.kid).sort(), (await service.deps.keys.jwks()).keys.map((k) => k.kid).sort());
  t.is((await other.signingKey()).kid, (await service.deps.keys.signingKey()).kid);
});
