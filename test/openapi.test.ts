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
  t.deepEqual(get.security, [{ bearer: ['profile'] }, { cookie: ['profile'] }]);
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
