import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestService, type TestService } from './helpers/service.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

test('/openapi.json is a valid OpenAPI 3.1 document (independent validator)', async (t) => {
  const res = await fetch(`${service.url}/openapi.json`);
  t.is(res.status, 200);
  const doc = (await res.json()) as any;
  t.is(doc.openapi, '3.1.0');
  const result = await new Validator().validate(doc);
  t.true(result.valid, JSON.stringify(result.errors, null, 2));
});

test('operations come from the zod schemas, with security and shared components', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const get = doc.paths['/api/v1/oauth/userinfo'].get;
  t.is(get.operationId, 'userinfo_get');
  t.deepEqual(get.security, [{ bearer: ['profile'] }, { oauth2: ['profile'] }, { cookie: ['profile'] }]);
  t.deepEqual(get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/UserInfo' });
  const userInfo = doc.components.schemas.UserInfo;
  t.deepEqual(userInfo.required.sort(), ['email', 'family_name', 'given_name', 'name', 'registered_at', 'sub']);
  t.is(userInfo.properties.registered_at.format, 'date-time');
  t.truthy(doc.paths['/api/v1/oauth/userinfo'].post);
  t.deepEqual(doc.paths['/healthz'].get.security, []);
  t.truthy(doc.paths['/readyz'].get.responses['503']);
  t.truthy(doc.paths['/.well-known/jwks.json'].get);
  t.is(doc.components.securitySchemes.bearer.scheme, 'bearer');
  t.is(doc.servers[0].url, service.url);
});

test('/docs is served from the swagger-ui-dist package, not a CDN', async (t) => {
  const res = await fetch(`${service.url}/docs`);
  t.is(res.status, 200);
  const page = await res.text();
  const sources = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  t.true(sources.length >= 4);
  for (const s of sources) {
    t.true(s.startsWith('/'), `${s} is local`);
    const asset = await fetch(`${service.url}${s}`);
    t.is(asset.status, 200, s);
  }
  const js = await fetch(`${service.url}/docs/assets/swagger-ui-bundle.js`);
  t.regex(js.headers.get('content-type')!, /javascript/);
  t.true((await js.text()).includes('SwaggerUIBundle'));
  t.is((await fetch(`${service.url}/docs/assets/..%2Fpackage.json`)).status, 404);
  t.is((await fetch(`${service.url}/docs/assets/index.html`)).status, 404);
});

test('every $ref in the document resolves to a component', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
  t.true(refs.length > 0);
  for (const ref of new Set(refs)) t.truthy(doc.components.schemas[ref], ref);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    t.not((schema as { $ref?: string }).$ref, `#/components/schemas/${name}`, `${name} refers to itself`);
  }
});

test('security: an oauth2 authorization-code scheme with the scopes; each operation names its scopes on it', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const flow = doc.components.securitySchemes.oauth2.flows.authorizationCode;
  t.is(flow.authorizationUrl, `${service.url}/oauth/authorize`);
  t.is(flow.tokenUrl, `${service.url}/api/v1/oauth/token`);
  t.is(flow.refreshUrl, `${service.url}/api/v1/oauth/token`);
  t.deepEqual(Object.keys(flow.scopes).sort(), ['data:read', 'data:write', 'offline_access', 'openid', 'profile']);
  for (const description of Object.values(flow.scopes)) t.true(typeof description === 'string' && description.length > 10);
  t.is(doc.components.securitySchemes.bearer.type, 'http');
  t.deepEqual(doc.paths['/api/v1/activities/'].get.security, [
    { bearer: ['data:read'] },
    { oauth2: ['data:read'] },
    { cookie: ['data:read'] },
  ]);
  t.deepEqual(doc.paths['/api/v1/dailies/{measure}'].post.security, [
    { bearer: ['data:write'] },
    { oauth2: ['data:write'] },
    { cookie: ['data:write'] },
  ]);
  // Application management refuses application tokens: no oauth2; app metadata needs one: no cookie.
  t.deepEqual(doc.paths['/api/v1/applications'].get.security, [{ bearer: [] }, { cookie: [] }]);
  t.deepEqual(doc.paths['/api/v1/activities/{activity_id}/app-metadata'].put.security, [
    { bearer: ['data:write'] },
    { oauth2: ['data:write'] },
  ]);
});

test("the web session's refreshed-token header is documented on every answer the cookie can get, once, as a component", async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  t.is(doc.components.headers['refreshed-token'].schema.type, 'string');
  let operations = 0;
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const cookie = (op.security ?? []).some((s: object) => 'cookie' in s);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const documented = response.headers?.['refreshed-token']?.$ref === '#/components/headers/refreshed-token';
        t.is(documented, cookie && Number(status) < 400, `${method} ${path} ${status}`);
      }
      if (cookie) operations++;
    }
  }
  t.true(operations >= 30, `${operations} operations`);
});

test('tags are declared with descriptions and every operation has one of them', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const declared = new Set(doc.tags.map((tag: { name: string; description: string }) => (t.true(tag.description.length > 10), tag.name)));
  for (const [path, item] of Object.entries<any>({ ...doc.paths, ...doc.webhooks })) {
    for (const [method, op] of Object.entries<any>(item)) {
      t.true(op.tags?.length > 0 && op.tags.every((tag: string) => declared.has(tag)), `${method} ${path}: ${op.tags}`);
    }
  }
});

test('schema names are what a generated client wants: no doubled words', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  const names = Object.keys(doc.components.schemas);
  t.true(names.includes('ActivityStatistics'));
  for (const name of names) {
    t.regex(name, /^[A-Z][A-Za-z0-9]*$/, name);
    const words = name.match(/[A-Z]+(?![a-z])|[A-Z][a-z0-9]*/g)!;
    t.true(
      words.every((w, i) => w !== words[i - 1]),
      `${name} repeats a word`,
    );
  }
  t.deepEqual(doc.paths['/api/v1/activities/'].get.responses['200'].content['application/json'].schema.items, {
    $ref: '#/components/schemas/ActivitySummary',
  });
  t.deepEqual(doc.components.schemas.ActivitySummary.properties.summary.anyOf[0], { $ref: '#/components/schemas/ActivityStatistics' });
});
