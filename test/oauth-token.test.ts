import test from 'ava';
import { decodeJwt } from 'jose';
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
    response_type: 'code', client_id: app.id, redirect_uri: REDIRECT, scope: 'profile data:read offline_access',
    state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256',
  });
  t.is(back.origin + back.pathname, REDIRECT);
  t.is(back.searchParams.get('state'), 'xyz');
  t.is(back.searchParams.get('iss'), service.url);
  const code = back.searchParams.get('code')!;
  t.truthy(code);
  const stored = await service.deps.db.selectFrom('authorization_codes').selectAll().executeTakeFirst();
  t.not(stored?.code_hash, code);

  const res = await postToken(service.url, { grant_type: 'authorization_code', code, client_id: app.id, code_verifier: verifier, redirect_uri: REDIRECT });
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
