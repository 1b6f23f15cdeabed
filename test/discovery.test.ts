import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

async function get(path: string) {
  const res = await fetch(service.url + path);
  return { res, body: (await res.json()) as Record<string, unknown> };
}

test('the OpenID Connect discovery document has every field SPEC lists', async (t) => {
  const { res, body } = await get('/.well-known/openid-configuration');
  t.is(res.status, 200);
  t.is(res.headers.get('deprecation'), null);
  const base = service.url;
  t.like(body, {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/api/v1/oauth/token`,
    userinfo_endpoint: `${base}/api/v1/oauth/userinfo`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    revocation_endpoint: `${base}/api/v1/oauth/revoke`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['RS256'],
    claims_supported: ['sub', 'exp', 'name', 'given_name', 'family_name'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post', 'client_secret_basic'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
  });
  for (const scope of ['openid', 'profile', 'data:read', 'data:write']) t.true((body.scopes_supported as string[]).includes(scope), scope);
});

test('the OAuth authorization server metadata has grant types and the registration endpoint instead of OIDC fields', async (t) => {
  const { res, body } = await get('/.well-known/oauth-authorization-server');
  t.is(res.status, 200);
  t.like(body, {
    issuer: service.url,
    grant_types_supported: ['authorization_code', 'refresh_token'],
    registration_endpoint: `${service.url}/api/v1/applications`,
    code_challenge_methods_supported: ['S256'],
    revocation_endpoint: `${service.url}/api/v1/oauth/revoke`,
  });
  t.false('userinfo_endpoint' in body);
  t.false('subject_types_supported' in body);
  t.false('id_token_signing_alg_values_supported' in body);
});

test('the old /api/v1/.well-known/ paths answer the same with Deprecation and a successor link', async (t) => {
  for (const name of ['openid-configuration', 'oauth-authorization-server', 'jwks.json']) {
    const current = await get(`/.well-known/${name}`);
    const old = await get(`/api/v1/.well-known/${name}`);
    t.is(old.res.status, 200);
    t.deepEqual(old.body, current.body, name);
    t.regex(old.res.headers.get('deprecation')!, /^@\d+$/);
    t.is(old.res.headers.get('link'), `<${service.url}/.well-known/${name}>; rel="successor-version"`);
  }
});

test('the OpenAPI document marks the old paths deprecated and documents the token endpoint as a form', async (t) => {
  const { body } = await get('/openapi.json');
  const paths = body.paths as Record<string, Record<string, any>>;
  t.true(paths['/api/v1/.well-known/openid-configuration']!.get.deprecated);
  t.truthy(paths['/api/v1/oauth/token']!.post.requestBody.content['application/x-www-form-urlencoded']);
  t.truthy(paths['/oauth/token']!.post);
  t.truthy(paths['/api/v1/oauth/revoke']!.post);
  t.truthy(paths['/api/v1/applications/{application_id}/page']!.put.responses['400']);
  t.falsy(paths['/api/v1/applications/{application_id}/page']!.put.responses['422']);
});

test('the authorization endpoint is documented with its query parameters', async (t) => {
  const { body } = await get('/openapi.json');
  const op = (body.paths as Record<string, Record<string, any>>)['/oauth/authorize']!.get;
  const names = op.parameters.map((p: { name: string }) => p.name);
  for (const name of ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method', 'prompt'])
    t.true(names.includes(name), name);
  t.truthy(op.responses['302']);
});
