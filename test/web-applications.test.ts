import test from 'ava';
import { createHash } from 'node:crypto';
import { findUserByEmail } from '../db/users.ts';
import { webhookSecretContext } from '../db/applications.ts';
import { createGrant, recordConsent } from '../db/grants.ts';
import { tokenResponse } from '../api/services/oauth/issue.ts';
import { webhookUrlProblem } from '../lib/webhook-url.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { WebClient, signUp } from './helpers/http.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

let n = 0;
const PASSWORD = 'a long enough passphrase';

/** A new account, signed in on a fresh client. */
async function signedIn() {
  const web = new WebClient(service.url);
  const email = `apps${++n}-${Date.now()}@example.com`;
  const res = await signUp(web, { email, password: PASSWORD });
  if (res.status !== 303) throw new Error(`sign-up failed: ${res.status}`);
  const user = (await findUserByEmail(service.deps.db, email))!;
  return { web, user };
}

const htmlUnescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The text inside the element with this id (no nested tags). */
function textById(page: string, id: string): string | undefined {
  const m = new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(page);
  return m ? htmlUnescape(m[1]!) : undefined;
}

async function createApp(web: WebClient, fields: Record<string, string> = {}): Promise<string> {
  const res = await web.postForm('/settings/applications', { name: 'My app', ...fields });
  if (res.status !== 303) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  const m = /^\/settings\/applications\/([A-Za-z0-9_-]+)\?created=1$/.exec(res.headers.get('location') ?? '');
  if (!m) throw new Error(`unexpected location ${res.headers.get('location')}`);
  return m[1]!;
}

const app = (id: string) => service.deps.db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();

/** The edit form's current values, ready to post back with changes. */
function editFields(a: NonNullable<Awaited<ReturnType<typeof app>>>, changes: Record<string, string> = {}): Record<string, string> {
  return {
    name: a.name,
    description: a.description ?? '',
    url: a.url ?? '',
    image: a.image ?? '',
    privacy_statement: a.privacy_statement ?? '',
    redirect_uris: a.redirect_uris.join('\n'),
    page_slug: a.page_slug ?? '',
    webhook_endpoints: a.webhook_endpoints.join('\n'),
    ...(a.published ? { published: 'on' } : {}),
    ...changes,
  };
}

const PUBLIC_FIELDS = {
  description: 'Plans your training week',
  url: 'https://planner.example/',
  image: 'https://planner.example/icon.png',
  privacy_statement: 'https://planner.example/privacy',
};

test('signed out, the settings pages send you to sign in and come back', async (t) => {
  const anon = new WebClient(service.url);
  for (const path of ['/settings/applications', '/settings/tokens', '/settings/connections']) {
    const res = await anon.get(path);
    t.is(res.status, 303, path);
    t.is(res.headers.get('location'), `/signin?next=${encodeURIComponent(path)}`);
  }
  const post = await anon.postForm('/settings/applications', { name: 'x' });
  t.is(post.status, 303);
  t.regex(post.headers.get('location')!, /^\/signin\?next=/);
  t.is(await service.deps.db.selectFrom('applications').select('id').where('name', '=', 'x').executeTakeFirst(), undefined);
});

test('the settings page links to the applications, tokens and connections pages', async (t) => {
  const { web } = await signedIn();
  const body = await (await web.get('/settings')).text();
  t.regex(body, /<a href="\/settings\/applications"[^>]*>API applications<\/a>/);
  t.regex(body, /<a href="\/settings\/tokens"[^>]*>Personal tokens<\/a>/);
  t.regex(body, /<a href="\/settings\/connections"[^>]*>Connected applications<\/a>/);
});

test('creating an application registers loopback redirect URIs, lists it and shows its client id', async (t) => {
  const { web, user } = await signedIn();
  const id = await createApp(web, { name: 'Loop app', description: 'Just testing' });
  const row = (await app(id))!;
  t.is(row.owner_id, user.id);
  t.is(row.name, 'Loop app');
  t.is(row.description, 'Just testing');
  t.deepEqual(row.redirect_uris, ['http://localhost', 'http://127.0.0.1']);
  t.false(row.published);
  t.is(row.url, null);

  const list = await (await web.get('/settings/applications')).text();
  t.regex(list, new RegExp(`<tr data-application-id="${id}">`));
  t.regex(list, new RegExp(`<a href="/settings/applications/${id}">Loop app</a>`));
  t.regex(list, />Private</);

  const edit = await web.get(`/settings/applications/${id}?created=1`);
  t.is(edit.status, 200);
  const body = await edit.text();
  t.is(textById(body, 'client-id'), id);
  t.regex(body, /The application id is your OAuth client id/);
  t.regex(body, /Application created\./);
  t.regex(body, /id="app-status" data-private="true"/);
  t.regex(body, new RegExp(`${service.url.replace(/[.:/]/g, '\\$&')}/privacy/client-side`), 'the standard client-side policy is hinted');
});

test('the create form refuses bad input with field errors', async (t) => {
  const { web, user } = await signedIn();
  const empty = await web.postForm('/settings/applications', { name: '  ' });
  t.is(empty.status, 422);
  t.is(textById(await empty.text(), 'name-error'), 'Name is required.');

  const long = await web.postForm('/settings/applications', { name: 'a'.repeat(101) });
  t.is(long.status, 422);
  const longBody = await long.text();
  t.is(textById(longBody, 'name-error'), 'Name must be at most 100 characters.');
  t.regex(longBody, new RegExp(`value="${'a'.repeat(101)}"`), 'the values are kept');

  const httpUri = await web.postForm('/settings/applications', {
    name: 'ok',
    redirect_uris: 'https://ok.example/cb\nhttp://example.com/cb',
  });
  t.is(httpUri.status, 422);
  const httpError = textById(await httpUri.text(), 'redirect_uris-error')!;
  t.regex(httpError, /^Line 2 \("http:\/\/example\.com\/cb"\)/);
  t.regex(httpError, /plain http is allowed only for loopback hosts/);

  const fragment = await web.postForm('/settings/applications', { name: 'ok', redirect_uris: 'https://x.example/#frag' });
  t.is(fragment.status, 422);
  const fragmentError = textById(await fragment.text(), 'redirect_uris-error')!;
  t.regex(fragmentError, /^Line 1 \("https:\/\/x\.example\/#frag"\)/);
  t.regex(fragmentError, /#fragment/);

  const ownCode = await web.postForm('/settings/applications', { name: 'ok', redirect_uris: 'https://x.example/cb?code=1' });
  t.is(ownCode.status, 422);
  t.regex(textById(await ownCode.text(), 'redirect_uris-error')!, /must not carry its own code query parameter/);
  const dots = await web.postForm('/settings/applications', { name: 'ok', redirect_uris: 'https://x.example/cb/%2e%2e/x' });
  t.is(dots.status, 422);
  t.regex(textById(await dots.text(), 'redirect_uris-error')!, /percent-encoded dot/);

  const badUrls = await web.postForm('/settings/applications', {
    name: 'ok',
    url: 'http://public.example/',
    image: 'not a url',
    privacy_statement: 'ftp://x.example/p',
  });
  t.is(badUrls.status, 422);
  const badBody = await badUrls.text();
  t.regex(textById(badBody, 'url-error')!, /https/);
  t.regex(textById(badBody, 'image-error')!, /absolute URL/);
  t.regex(textById(badBody, 'privacy_statement-error')!, /https/);

  const longDescription = await web.postForm('/settings/applications', { name: 'ok', description: 'd'.repeat(501) });
  t.is(longDescription.status, 422);
  t.is(textById(await longDescription.text(), 'description-error'), 'Description must be at most 500 characters.');

  const badSlug = await web.postForm('/settings/applications', { name: 'ok', page_slug: 'Not-OK' });
  t.is(badSlug.status, 422);
  t.regex(textById(await badSlug.text(), 'page_slug-error')!, /lowercase/);

  const rows = await service.deps.db.selectFrom('applications').select('id').where('owner_id', '=', user.id).execute();
  t.is(rows.length, 0, 'nothing was created');
});

test('a private application cannot be published; filling the four fields makes it public and publishable', async (t) => {
  const { web } = await signedIn();
  const anon = new WebClient(service.url);
  const slug = `planner-${Date.now().toString(36)}`;
  const id = await createApp(web, { name: 'Week Planner' });

  // Publishing while private: refused, nothing stored.
  const refused = await web.postForm(
    `/settings/applications/${id}`,
    editFields((await app(id))!, { published: 'on', description: 'Only a description' }),
  );
  t.is(refused.status, 422);
  t.is(textById(await refused.text(), 'published-error'), 'Fill in description, URL, image and privacy statement to publish');
  t.false((await app(id))!.published);
  t.is((await app(id))!.description, null);

  // A page slug while unpublished: the page URL joins the redirect URIs; only the owner sees a preview.
  const withSlug = await web.postForm(`/settings/applications/${id}`, editFields((await app(id))!, { page_slug: slug }));
  t.is(withSlug.status, 303);
  t.is(withSlug.headers.get('location'), `/settings/applications/${id}?saved=1`);
  const pageUrl = `${service.url}/pages/${slug}/`;
  t.deepEqual((await app(id))!.redirect_uris, ['http://localhost', 'http://127.0.0.1', pageUrl]);
  t.is((await anon.get(`/pages/${slug}/`)).status, 404);
  const preview = await web.get(`/pages/${slug}/`);
  t.is(preview.status, 200);
  t.regex(await preview.text(), /Preview: not published/);
  t.notRegex(await (await anon.get('/apps')).text(), new RegExp(id));

  // All four fields and Published: public at once, listed, page live.
  const published = await web.postForm(`/settings/applications/${id}`, editFields((await app(id))!, { ...PUBLIC_FIELDS, published: 'on' }));
  t.is(published.status, 303);
  const row = (await app(id))!;
  t.true(row.published);
  t.is(row.url, PUBLIC_FIELDS.url);
  const edit = await (await web.get(`/settings/applications/${id}`)).text();
  t.regex(edit, /id="app-status" data-private="false"/);

  const directory = await anon.get('/apps');
  t.is(directory.status, 200);
  const dirBody = await directory.text();
  t.regex(dirBody, new RegExp(`<li data-application-id="${id}">`));
  t.regex(dirBody, /Week Planner/);
  t.regex(dirBody, /Plans your training week/);
  t.regex(dirBody, new RegExp(`href="/pages/${slug}/"`));

  const live = await anon.get(`/pages/${slug}/`);
  t.is(live.status, 200);
  const liveBody = await live.text();
  t.notRegex(liveBody, /Preview: not published/);
  t.regex(liveBody, /<h1>Week Planner<\/h1>/);
  t.regex(liveBody, /href="https:\/\/planner\.example\/privacy"/);
  const connect = htmlUnescape(/id="connect" href="([^"]+)"/.exec(liveBody)![1]!);
  const authorize = new URL(connect, service.url);
  t.is(authorize.pathname, '/oauth/authorize');
  t.is(authorize.searchParams.get('response_type'), 'code');
  t.is(authorize.searchParams.get('client_id'), id);
  t.is(authorize.searchParams.get('redirect_uri'), pageUrl);
  t.is(authorize.searchParams.get('scope'), 'profile');

  // The Connect link starts a valid authorization request: a signed-in user gets the consent screen.
  const visitor = await signedIn();
  const consent = await visitor.web.get(authorize.pathname + authorize.search);
  t.is(consent.status, 200, consent.headers.get('location') ?? '');
  t.regex(await consent.text(), /Week Planner/);

  const noSlash = await anon.get(`/pages/${slug}?code=x`);
  t.is(noSlash.status, 301);
  t.is(noSlash.headers.get('location'), `/pages/${slug}/?code=x`);

  const back = await (await anon.get(`/pages/${slug}/?code=abc&state=s`)).text();
  t.is(textById(back, 'connect-result'), 'Connected to Week Planner');
  const denied = await (
    await anon.get(`/pages/${slug}/?error=access_denied&error_description=${encodeURIComponent('<b>declined</b>')}`)
  ).text();
  t.is(textById(denied, 'connect-result'), 'Not connected: <b>declined</b>');
  t.notRegex(denied, /<b>declined/, 'escaped');

  t.is((await anon.get('/pages/no-such-page/')).status, 404);
});

test('a slug taken by another application is a field error', async (t) => {
  const { web } = await signedIn();
  const slug = `taken-${Date.now().toString(36)}`;
  await createApp(web, { name: 'First', page_slug: slug });
  const other = await signedIn();
  const id = await createApp(other.web, { name: 'Second' });
  const res = await other.web.postForm(`/settings/applications/${id}`, editFields((await app(id))!, { page_slug: slug }));
  t.is(res.status, 422);
  t.is(textById(await res.text(), 'page_slug-error'), 'This page slug belongs to another application.');
  t.is((await app(id))!.page_slug, null);
});

test('a client secret is shown once and stored only as its SHA-256; it can be revoked', async (t) => {
  const { web } = await signedIn();
  const id = await createApp(web);
  const empty = await web.postForm(`/settings/applications/${id}/secrets`, { label: '' });
  t.is(empty.status, 422);
  t.is(textById(await empty.text(), 'label-error'), 'Label is required.');

  const res = await web.postForm(`/settings/applications/${id}/secrets`, { label: 'Production server' });
  t.is(res.status, 201);
  t.is(res.headers.get('cache-control'), 'no-store');
  const secret = textById(await res.text(), 'new-secret')!;
  t.regex(secret, /^tds_cs_[A-Za-z0-9_-]{43}$/);

  const rows = await service.deps.db.selectFrom('client_secrets').selectAll().where('application_id', '=', id).execute();
  t.is(rows.length, 1);
  t.not(rows[0]!.secret_hash, secret);
  t.is(rows[0]!.secret_hash, createHash('sha256').update(secret).digest('hex'));
  t.is(rows[0]!.label, 'Production server');

  const after = await (await web.get(`/settings/applications/${id}`)).text();
  t.false(after.includes(secret), 'never shown again');
  t.false(after.includes('id="new-secret"'));
  t.regex(after, new RegExp(`<tr data-secret-id="${rows[0]!.id}">`));
  t.true(after.includes(`…${secret.slice(-4)}`));
  t.regex(after, /Production server/);

  const revoked = await web.postForm(`/settings/applications/${id}/secrets/${rows[0]!.id}/revoke`, {});
  t.is(revoked.status, 303);
  t.is(revoked.headers.get('location'), `/settings/applications/${id}?secret_revoked=1`);
  t.is((await service.deps.db.selectFrom('client_secrets').select('id').where('application_id', '=', id).execute()).length, 0);
  t.is((await web.postForm(`/settings/applications/${id}/secrets/${rows[0]!.id}/revoke`, {})).status, 404);
});

test('webhook endpoints must be https; a new webhook secret is shown once', async (t) => {
  const { web } = await signedIn();
  const id = await createApp(web);
  const loop = await web.postForm(
    `/settings/applications/${id}`,
    editFields((await app(id))!, { webhook_endpoints: 'http://localhost:9000/hook' }),
  );
  t.is(loop.status, 422, 'loopback http only when WEBHOOK_ALLOW_HTTP_LOOPBACK is set');
  t.regex(textById(await loop.text(), 'webhook_endpoints-error')!, /^Line 1 /);
  const plain = await web.postForm(
    `/settings/applications/${id}`,
    editFields((await app(id))!, { webhook_endpoints: 'https://hooks.example/a\nhttp://hooks.example/b' }),
  );
  t.is(plain.status, 422);
  t.regex(textById(await plain.text(), 'webhook_endpoints-error')!, /^Line 2 .*https/);
  const privateNet = await web.postForm(
    `/settings/applications/${id}`,
    editFields((await app(id))!, { webhook_endpoints: 'https://10.1.2.3/hook' }),
  );
  t.is(privateNet.status, 422);

  const ok = await web.postForm(
    `/settings/applications/${id}`,
    editFields((await app(id))!, { webhook_endpoints: 'https://hooks.example/a', new_webhook_secret: 'on' }),
  );
  t.is(ok.status, 200);
  const secret = textById(await ok.text(), 'new-webhook-secret')!;
  t.regex(secret, /^tds_whs_/);
  const row = (await app(id))!;
  t.deepEqual(row.webhook_endpoints, ['https://hooks.example/a']);
  // Stored sealed (lib/secret-box.ts): not readable from the database, bound to this application.
  t.regex(row.webhook_secret!, /^tds-sealed:v1:/);
  t.false(row.webhook_secret!.includes(secret.slice(8)));
  t.is(service.deps.box.open(row.webhook_secret!, webhookSecretContext(id)), secret);
  t.throws(() => service.deps.box.open(row.webhook_secret!, webhookSecretContext('another-app')), { name: 'SecretUnreadable' });
  const after = await (await web.get(`/settings/applications/${id}`)).text();
  t.false(after.includes(secret));
  t.regex(after, /A webhook secret is set/);

  // Saving without the box keeps the secret.
  t.is((await web.postForm(`/settings/applications/${id}`, editFields((await app(id))!))).status, 303);
  t.is((await app(id))!.webhook_secret, row.webhook_secret);
});

test('loopback webhook endpoints are accepted only when WEBHOOK_ALLOW_HTTP_LOOPBACK is set', (t) => {
  const off = { allowHttpLoopback: false };
  const on = { allowHttpLoopback: true };
  for (const uri of ['http://localhost:9000/hook', 'http://127.0.0.1/hook', 'http://[::1]:8080/h', 'https://localhost/hook']) {
    t.truthy(webhookUrlProblem(uri, off), uri);
    t.is(webhookUrlProblem(uri, on), undefined, uri);
  }
  for (const uri of [
    'http://hooks.example/x',
    'https://192.168.1.2/x',
    'https://[fd00::1]/x',
    'https://169.254.169.254/x',
    'https://[::ffff:10.0.0.1]/x',
    'https://192.0.2.1/x',
    'ftp://hooks.example/x',
    'https://u:p@hooks.example/x',
    'not a url',
  ]) {
    t.truthy(webhookUrlProblem(uri, on), uri);
  }
  t.is(webhookUrlProblem('https://hooks.example/x?y=1', off), undefined);
  for (const uri of ['https://8.8.8.8/x', 'https://[2606:4700::1111]/x']) t.is(webhookUrlProblem(uri, off), undefined, uri);
});

test("another user's application is a 404 for pages and posts, and nothing changes", async (t) => {
  const owner = await signedIn();
  const id = await createApp(owner.web, { name: 'Mine' });
  await owner.web.postForm(`/settings/applications/${id}/secrets`, { label: 'kept' });
  const [secret] = await service.deps.db.selectFrom('client_secrets').selectAll().where('application_id', '=', id).execute();
  const intruder = await signedIn();
  t.is((await intruder.web.get(`/settings/applications/${id}`)).status, 404);
  t.is((await intruder.web.postForm(`/settings/applications/${id}`, { name: 'Stolen' })).status, 404);
  t.is((await intruder.web.postForm(`/settings/applications/${id}/secrets`, { label: 'mine now' })).status, 404);
  t.is((await intruder.web.postForm(`/settings/applications/${id}/secrets/${secret!.id}/revoke`, {})).status, 404);
  t.is((await intruder.web.postForm(`/settings/applications/${id}/delete`, {})).status, 404);
  t.is((await intruder.web.get('/settings/applications/no-such-app')).status, 404);
  const row = (await app(id))!;
  t.is(row.name, 'Mine');
  const secrets = await service.deps.db.selectFrom('client_secrets').select('label').where('application_id', '=', id).execute();
  t.deepEqual(
    secrets.map((s) => s.label),
    ['kept'],
  );
  t.notRegex(await (await intruder.web.get('/settings/applications')).text(), new RegExp(id));
});

test('a cross-origin post is refused with 403 and changes nothing', async (t) => {
  const { web, user } = await signedIn();
  const id = await createApp(web, { name: 'Original' });
  const evil = { origin: 'https://evil.example' };
  t.is((await web.postForm(`/settings/applications/${id}`, { name: 'Hijacked' }, evil)).status, 403);
  t.is((await web.postForm(`/settings/applications/${id}/delete`, {}, evil)).status, 403);
  t.is((await web.postForm(`/settings/applications/${id}/secrets`, { label: 'evil' }, evil)).status, 403);
  t.is((await web.postForm('/settings/applications', { name: 'Evil app' }, evil)).status, 403);
  t.is((await web.postForm('/settings/tokens', { label: 'evil', scopes: 'data:read' }, evil)).status, 403);
  t.is((await web.postForm(`/settings/applications/${id}`, { name: 'Hijacked' }, { origin: null })).status, 403, 'no Origin, no Referer');
  t.is((await app(id))!.name, 'Original');
  t.is((await service.deps.db.selectFrom('applications').select('id').where('owner_id', '=', user.id).execute()).length, 1);
  t.is((await service.deps.db.selectFrom('client_secrets').select('id').where('application_id', '=', id).execute()).length, 0);
  t.is((await service.deps.db.selectFrom('grants').select('id').where('user_id', '=', user.id).execute()).length, 0);
});

test('deleting an application removes it with its secrets, consents and grants', async (t) => {
  const { web } = await signedIn();
  const id = await createApp(web, { name: 'Doomed' });
  await web.postForm(`/settings/applications/${id}/secrets`, { label: 's' });
  const fan = await createTestUser(service);
  await recordConsent(service.deps.db, fan.id, id, ['profile']);
  await createGrant(service.deps.db, { user_id: fan.id, application_id: id, scopes: ['profile'], withRefreshToken: true });

  const res = await web.postForm(`/settings/applications/${id}/delete`, {});
  t.is(res.status, 303);
  t.is(res.headers.get('location'), '/settings/applications?deleted=1');
  t.is(await app(id), undefined);
  const { db } = service.deps;
  t.is((await db.selectFrom('client_secrets').select('id').where('application_id', '=', id).execute()).length, 0);
  t.is((await db.selectFrom('consents').select('user_id').where('application_id', '=', id).execute()).length, 0);
  t.is((await db.selectFrom('grants').select('id').where('application_id', '=', id).execute()).length, 0);
  const list = await (await web.get('/settings/applications?deleted=1')).text();
  t.regex(list, /The application was deleted\./);
  t.notRegex(list, /Doomed/);
  t.is((await web.get(`/settings/applications/${id}`)).status, 404);
});

test('a personal token is shown once after a redirect (a reload creates nothing), works, refreshes, and revoking it stops both tokens', async (t) => {
  const { web, user } = await signedIn();
  const none = await web.postForm('/settings/tokens', { label: 'no scopes' });
  t.is(none.status, 422);
  t.is(textById(await none.text(), 'scopes-error'), 'Choose at least one scope.');
  const noLabel = await web.postForm('/settings/tokens', { label: '', scopes: 'data:read' });
  t.is(noLabel.status, 422);
  t.is(textById(await noLabel.text(), 'label-error'), 'Label is required.');

  const posted = await web.postForm('/settings/tokens', { label: 'My script', scopes: 'data:read' });
  t.is(posted.status, 303, 'POST → redirect → GET');
  const shownAt = posted.headers.get('location')!;
  t.regex(shownAt, /^\/settings\/tokens\?created=[\w-]{22}$/, 'the URL carries an id, never the token');
  const stranger = await signedIn();
  const peek = await stranger.web.get(shownAt);
  t.false((await peek.text()).includes('new-access-token'), "another user's session sees no secret at that URL");
  const res = await web.get(shownAt);
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  const body = await res.text();
  const access = textById(body, 'new-access-token')!;
  const refresh = textById(body, 'new-refresh-token')!;
  t.regex(access, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  t.regex(refresh, /^tds_rt_/);
  t.true(body.includes(`POST ${service.url}/api/v1/oauth/token`));
  t.true(body.includes('grant_type=refresh_token&amp;refresh_token=…'));
  const reloaded = await (await web.get(shownAt)).text();
  t.false(reloaded.includes(access) || reloaded.includes(refresh), 'a reload shows no secret');
  t.regex(reloaded, /This token was shown once and cannot be shown again/);
  t.is(
    await service.deps.db
      .selectFrom('grants')
      .where('user_id', '=', user.id)
      .where('application_id', 'is', null)
      .select('id')
      .execute()
      .then((r) => r.length),
    1,
    'one token, however often the page is loaded',
  );

  const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
  const apps = await fetch(`${service.url}/api/v1/applications`, bearer(access));
  t.is(apps.status, 200, 'a first-party credential needs no scope for application management');
  const userinfo = await fetch(`${service.url}/api/v1/oauth/userinfo`, bearer(access));
  t.is(userinfo.status, 403, 'userinfo needs profile');

  const exchanged = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh }).toString(),
  });
  t.is(exchanged.status, 200, await exchanged.clone().text());
  const fresh = (await exchanged.json()) as { access_token: string; scope: string; token_type: string };
  t.is(fresh.token_type, 'Bearer');
  t.is(fresh.scope, 'data:read');
  t.is((await fetch(`${service.url}/api/v1/applications`, bearer(fresh.access_token))).status, 200);

  const [grant] = await service.deps.db
    .selectFrom('grants')
    .selectAll()
    .where('user_id', '=', user.id)
    .where('application_id', 'is', null)
    .execute();
  t.is(grant!.label, 'My script');
  const list = await (await web.get('/settings/tokens')).text();
  t.regex(list, new RegExp(`<tr data-token-id="${grant!.id}">`));
  t.regex(list, /My script/);
  t.false(list.includes(access) || list.includes(refresh), 'never shown again');

  // Another user cannot revoke it.
  const other = await signedIn();
  t.is((await other.web.postForm(`/settings/tokens/${grant!.id}/revoke`, {})).status, 404);
  t.is((await fetch(`${service.url}/api/v1/applications`, bearer(access))).status, 200);

  const revoked = await web.postForm(`/settings/tokens/${grant!.id}/revoke`, {});
  t.is(revoked.status, 303);
  t.is(revoked.headers.get('location'), '/settings/tokens?revoked=1');
  t.is((await fetch(`${service.url}/api/v1/applications`, bearer(access))).status, 401);
  t.is((await fetch(`${service.url}/api/v1/applications`, bearer(fresh.access_token))).status, 401);
  const again = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh }).toString(),
  });
  t.is(again.status, 400);
  t.is(((await again.json()) as { error: string }).error, 'invalid_grant');
  t.is((await web.postForm(`/settings/tokens/${grant!.id}/revoke`, {})).status, 404);
});

test('connected applications are listed and revoking access deletes the consent and grants', async (t) => {
  const { web, user } = await signedIn();
  const developer = await createTestUser(service);
  const connected = await createTestApplication(service, developer, { name: 'Coach Bot' });
  await recordConsent(service.deps.db, user.id, connected.id, ['data:read', 'profile']);
  const { grant } = await createGrant(service.deps.db, {
    user_id: user.id,
    application_id: connected.id,
    scopes: ['data:read', 'profile'],
    withRefreshToken: true,
  });
  const appToken = (await tokenResponse(service.deps.tokens, grant)).access_token;
  t.is((await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${appToken}` } })).status, 200);

  const page = await (await web.get('/settings/connections')).text();
  t.regex(page, new RegExp(`<li data-application-id="${connected.id}">`));
  t.regex(page, /Coach Bot/);
  t.regex(page, /Read your activities, traces, daily measures and training profile/);
  t.regex(page, /See your name and email address/);
  t.regex(page, new RegExp(`<button type="submit" class="danger" id="revoke-${connected.id}">Revoke access</button>`));

  const res = await web.postForm(`/settings/connections/${connected.id}/revoke`, {});
  t.is(res.status, 303);
  t.is(res.headers.get('location'), `/settings/connections?revoked=${connected.id}`);
  const after = await (await web.get(res.headers.get('location')!)).text();
  t.regex(after, /Access revoked for Coach Bot/);
  t.notRegex(after, new RegExp(`data-application-id="${connected.id}"`));

  const { db } = service.deps;
  t.is(await db.selectFrom('consents').selectAll().where('user_id', '=', user.id).executeTakeFirst(), undefined);
  t.is(await db.selectFrom('grants').selectAll().where('id', '=', grant.id).executeTakeFirst(), undefined);
  t.is(
    (await fetch(`${service.url}/api/v1/oauth/userinfo`, { headers: { authorization: `Bearer ${appToken}` } })).status,
    401,
    'its access token stops at once',
  );
  t.is((await web.postForm(`/settings/connections/${connected.id}/revoke`, {})).status, 404);
});

test('the client-side privacy policy is public', async (t) => {
  const res = await new WebClient(service.url).get('/privacy/client-side');
  t.is(res.status, 200);
  const body = await res.text();
  t.regex(body, /runs entirely in your browser or on your device/);
  t.regex(body, /developer receives nothing/);
  t.notRegex(body, /style=|<script/);
});
