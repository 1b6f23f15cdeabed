/**
 * No answer that depends on who asks may be kept by a cache for someone else, or shown again from
 * the browser's history after sign-out: every operation of /openapi.json that takes a credential,
 * and every web page of the router, asked with one, answers with `Cache-Control` (`private,
 * no-cache` beside an ETag, `no-store` otherwise: pages and downloads hold account data), errors
 * included. The walk is general: an operation or page added later is walked too.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { signedInClient, type WebClient } from './helpers/http.ts';
import { createApp } from '../api/app.ts';
import { SCOPES } from '../api/services/auth/scopes.ts';

let service: TestService;
let token: string;
let appToken: string;
let web: WebClient;
let ids: Record<string, string>;

function ride(stamp: string, seconds = 300) {
  const start = Date.parse(stamp);
  const lines = Array.from({ length: seconds }, (_, i) => `${new Date(start + i * 1000).toISOString().slice(0, 19)}Z,${150 + (i % 50)}`);
  return new TextEncoder().encode(`timestamp,power\n${lines.join('\n')}\n`);
}

test.before(async () => {
  service = await startTestService({ workers: true, env: { API_RATE_LIMIT: '1000000' } });
  const user = await createTestUser(service);
  token = await tokenFor(service, user, [...SCOPES]);
  const app = await createTestApplication(service, user, { name: 'Cache walk', redirect_uris: ['https://app.example/callback'] });
  appToken = await tokenFor(service, user, ['data:read', 'data:write', 'profile'], app.id);
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.csv', bytes: ride('2024-05-01T10:00:00Z') }], { sport: 'cycling' });
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
  const trace = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: '2024-05-01T10:01:00Z', lactate: 2.1 });
  if (trace.status !== 201) throw new Error(JSON.stringify(trace.body));
  const daily = await api(service, token, 'POST', '/api/v1/dailies/body_mass', { date: '2024-05-01', value: 70 });
  if (daily.status >= 300) throw new Error(JSON.stringify(daily.body));
  ids = {
    activity_id: source.activity_ids[0],
    id: source.activity_ids[0],
    trace_id: trace.body.id,
    application_id: app.id,
    source_id: source.id,
    measure: 'body_mass',
    date: '2024-05-01',
    client_id: app.id,
    slug: 'cache-walk',
  };
  web = await signedInClient(service.url, user.email);
});
test.after.always(() => service?.close());

type Operation = { operationId: string; security?: Record<string, string[]>[]; parameters?: { name: string; in: string }[] };

const PRIVATE = /^(no-store|private, no-cache)$/;

test('every operation that takes a credential answers with Cache-Control: private, no-cache beside an ETag, no-store otherwise, errors included', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Operation>> };
  let walked = 0;
  const statuses = new Set<number>();
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (!op.security?.length) continue; // public: discovery, the token endpoint (no-store of its own), …
      const read = method === 'get';
      // Reads of the user's own resources (their answers: 200 with data); writes against ids that do not exist (4xx, nothing changed).
      const path = template.replace(/\{(\w+)\}/g, (_, name: string) =>
        encodeURIComponent(read ? (ids[name] ?? 'x') : name === 'measure' ? 'body_mass' : name === 'date' ? '2024-06-01' : randomUUID()),
      );
      const bearer = template.endsWith('/app-metadata') ? appToken : token;
      const res = await fetch(`${service.url}${path}`, {
        method: method.toUpperCase(),
        headers: { authorization: `Bearer ${bearer}`, ...(read ? {} : { 'content-type': 'application/json' }) },
        ...(read ? {} : { body: '{}' }),
      });
      await res.arrayBuffer();
      walked++;
      statuses.add(res.status);
      const label = `${op.operationId} ${method.toUpperCase()} ${path} → ${res.status}`;
      const cacheControl = res.headers.get('cache-control');
      t.regex(cacheControl ?? '(none)', PRIVATE, label);
      if (res.headers.get('etag') && res.status < 300) t.is(cacheControl, 'private, no-cache', `${label}: validated`);
    }
  }
  t.true(walked >= 40, `${walked} operations walked`);
  t.true(statuses.has(200) && [...statuses].some((s) => s >= 400), `answers and errors both walked: ${[...statuses].join(', ')}`);

  // The ones the issue named, by status: no validator, account data.
  for (const path of [
    '/api/v1/profile/tags/',
    '/api/v1/profile/sports/',
    '/api/v1/profile/template-week',
    `/api/v1/activities/${ids.activity_id}/download`,
  ]) {
    const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    t.is(res.status, 200, path);
    t.regex(res.headers.get('cache-control') ?? '(none)', PRIVATE, path);
  }
  const apps = await fetch(`${service.url}/api/v1/applications`, { headers: { authorization: `Bearer ${token}` } });
  await apps.arrayBuffer();
  t.regex(apps.headers.get('cache-control') ?? '(none)', PRIVATE);
});

test('every web page of the router, signed in, answers with Cache-Control: no-store (pages hold account data)', async (t) => {
  const app = createApp(service.deps);
  const router = app.middleware
    .map((m) => (m as unknown as { router?: { stack: { path: string; methods: string[] }[] } }).router)
    .find(Boolean)!;
  const pages = [
    ...new Set(
      router.stack
        .filter((l) => l.methods.includes('GET') && !/^\/(api\/|docs|static|openapi\.json|favicon\.ico|\.well-known|oauth\/)/.test(l.path))
        .map((l) => l.path),
    ),
  ];
  await api(service, token, 'PUT', `/api/v1/applications/${ids.application_id}/page`, { slug: ids.slug });
  const fill: Record<string, string> = { id: ids.activity_id!, slug: ids.slug! };
  t.true(pages.length >= 12, pages.join(' '));
  for (const template of pages) {
    const path = template.replace(/:(\w+)/g, (_, name: string) =>
      template.startsWith('/settings/applications/') ? ids.application_id! : (fill[name] ?? 'x'),
    );
    const res = await web.get(path, { accept: 'text/html' });
    await res.arrayBuffer();
    const label = `GET ${path} → ${res.status}`;
    t.is(res.headers.get('cache-control'), 'no-store', label);
  }
  // And the API reference's own page (signed in or not).
  const docs = await web.get('/docs');
  await docs.arrayBuffer();
  t.is(docs.headers.get('cache-control'), 'no-store');
});
