import test from 'ava';
import { browserSuite, openPage, signIn } from './helpers/browser.ts';
import { collectErrors, DESKTOP, phoneAndDesktop } from './helpers/page-checks.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';

/**
 * The coaching pages in headless Chromium at 1280 and 390 px (docs/coaching.md, "The web app"): an
 * owner creates a team and an invitation link, a coach joins with it, an athlete shares their data
 * with the team and sees who can see it and what a coach changed for them, the roster shows the
 * athlete's latest ride, week and power; stopping the share empties the roster at once. Managed users
 * are added, renamed and deleted under Settings. Signed out, another origin, another user's team: refused.
 */
const suite = browserSuite(test, { workers: true });

/** A 20-minute ride of steady 250 W yesterday, uploaded through the API. */
async function ride(token: string) {
  const start = Date.now() - 86_400_000;
  const rows = Array.from({ length: 1200 }, (_, i) => `${new Date(start + i * 1000).toISOString()},250,140`);
  const csv = new TextEncoder().encode(`timestamp,power,heart_rate\n${rows.join('\n')}\n`);
  const [source] = await uploadAndWait(suite.service, token, [{ name: 'ride.csv', bytes: csv }], { sport: 'cycling' });
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
}

test('owner, coach and athlete: a team, an invitation, a share, the roster, who changed what, and stopping the share', async (t) => {
  const owner = await createTestUser(suite.service, { first_name: 'Olivia', last_name: 'Owner' });
  const coach = await createTestUser(suite.service, { first_name: 'Cees', last_name: 'Coach' });
  const athlete = await createTestUser(suite.service, { first_name: 'Anna', last_name: 'Athlete' });
  await ride(await tokenFor(suite.service, athlete, ['data:read', 'data:write']));
  const base = suite.service.url;

  // The owner creates the team and an invitation link, shown once.
  const { page: ownerPage } = await openPage(suite.browser);
  const errors = collectErrors(ownerPage);
  await ownerPage.setViewportSize(DESKTOP);
  await signIn(ownerPage, base, owner.email, '/settings/teams');
  await ownerPage.waitForURL((u) => u.pathname === '/settings/teams');
  t.truthy(await ownerPage.$('#no-teams'));
  await ownerPage.fill('#name', 'Velo Club');
  await ownerPage.click('#create-team-form button[type=submit]');
  await ownerPage.waitForURL((u) => /^\/teams\/[0-9a-f-]{36}$/.test(u.pathname));
  t.is((await ownerPage.textContent('h1'))?.trim(), 'Velo Club');
  const teamId = (await ownerPage.textContent('#team-id'))!.trim();
  t.truthy(await ownerPage.$('#no-athletes'));
  await ownerPage.click('#invite-form button[type=submit]');
  await ownerPage.waitForSelector('#new-invitation');
  const link = (await ownerPage.textContent('#new-invitation'))!.trim();
  t.regex(link, /\/teams\/join\/tds_inv_/);
  await ownerPage.reload();
  t.is(await ownerPage.$('#new-invitation'), null, 'the link is shown only once');
  t.is(await ownerPage.locator('#invitations tbody tr').count(), 1);
  await phoneAndDesktop(t, ownerPage, 'team-owner');

  // The coach opens the link, signs in, and joins.
  const { page: coachPage } = await openPage(suite.browser);
  collectErrors(coachPage);
  await coachPage.setViewportSize(DESKTOP);
  await coachPage.goto(link);
  await coachPage.waitForURL((u) => u.pathname === '/signin');
  await coachPage.fill('#email', coach.email);
  await coachPage.fill('#password', 'correct horse battery staple');
  await coachPage.click('button[type=submit]');
  await coachPage.waitForSelector('#join-button');
  await phoneAndDesktop(t, coachPage, 'team-join');
  await coachPage.click('#join-button');
  await coachPage.waitForURL((u) => u.pathname === `/teams/${teamId}`);
  t.is((await coachPage.textContent('p.notice'))?.trim(), 'You joined the team.');
  t.is(await coachPage.locator('#members li').count(), 2);
  t.is(await coachPage.$('#invite-form'), null, 'a coach makes no invitations');
  // The link was single use.
  await coachPage.goto(link);
  t.regex((await coachPage.textContent('main'))!, /used, has expired or was revoked/);

  // The athlete shares with the team by its id; Settings → Teams lists who can see their data.
  const { page: athletePage } = await openPage(suite.browser);
  collectErrors(athletePage);
  await athletePage.setViewportSize(DESKTOP);
  await signIn(athletePage, base, athlete.email, '/settings/teams');
  await athletePage.waitForURL((u) => u.pathname === '/settings/teams');
  t.truthy(await athletePage.$('#no-authorized-teams'));
  await athletePage.fill('#team_id', 'not-an-id');
  await athletePage.click('#share-form button[type=submit]');
  await athletePage.waitForSelector('#team_id-error');
  await athletePage.fill('#team_id', teamId);
  await athletePage.click('#share-form button[type=submit]');
  await athletePage.waitForSelector('#authorized-teams');
  t.regex((await athletePage.textContent('#authorized-teams'))!, /Velo Club[\s\S]*data:read/);

  // The coach's roster: Anna, her latest ride, 20 minutes this week, 250 W for 5 s … 20 min.
  await coachPage.goto(`${base}/teams/${teamId}`);
  const row = coachPage.locator(`#roster tr[data-user-id="${athlete.id}"]`);
  t.regex((await row.textContent())!, /Anna Athlete[\s\S]*cycling[\s\S]*0 h 20 min[\s\S]*250 W[\s\S]*250 W[\s\S]*250 W[\s\S]*250 W/);
  await phoneAndDesktop(t, coachPage, 'team-roster');

  // A change the coach makes for her (a delegated token through the team, with write) shows on her page.
  await api(suite.service, await tokenFor(suite.service, athlete, ['data:write']), 'POST', `/api/v1/teams/${teamId}/authorize`, {
    scopes: ['data:read', 'data:write'],
  });
  const coachToken = await tokenFor(suite.service, coach, ['data:read', 'data:write']);
  const delegated = await api(suite.service, coachToken, 'POST', '/api/v1/oauth/delegated-token', { sub: athlete.id, team_id: teamId });
  t.is(
    (await api(suite.service, delegated.body.access_token, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z', lactate: 2 }))
      .status,
    201,
  );
  await athletePage.reload();
  t.regex((await athletePage.textContent('#changes-by-others'))!, /Cees Coach[\s\S]*added a trace/);
  await phoneAndDesktop(t, athletePage, 'settings-teams');

  // Stopping the share: the roster is empty and the delegated token fails at once.
  await athletePage.click(`#revoke-team-${teamId}`);
  await athletePage.waitForSelector('#no-authorized-teams');
  t.regex((await athletePage.textContent('p.notice'))!, /can no longer see your data/);
  await coachPage.reload();
  t.truthy(await coachPage.$('#no-athletes'));
  t.is((await api(suite.service, delegated.body.access_token, 'GET', '/api/v1/traces/')).status, 401);

  // The coach leaves; the owner renames, then deletes the team.
  await coachPage.click('#leave-team');
  await coachPage.waitForURL((u) => u.pathname === '/settings/teams');
  t.truthy(await coachPage.$('#no-teams'));
  await ownerPage.fill('#rename-form #name', 'Velo Club Zuid');
  await ownerPage.click('#rename-form button[type=submit]');
  await ownerPage.waitForSelector('p.notice');
  t.is((await ownerPage.textContent('h1'))?.trim(), 'Velo Club Zuid');
  await ownerPage.click('#delete-team');
  await ownerPage.waitForURL((u) => u.pathname === '/settings/teams');
  t.truthy(await ownerPage.$('#no-teams'));
  t.deepEqual(errors, []);
});

test('managed users under Settings: added, renamed and deleted with their data; a name too long is refused', async (t) => {
  const manager = await createTestUser(suite.service, { first_name: 'Maria' });
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page, [{ url: /\/settings\/managed-users$/, status: 422 }]);
  await page.setViewportSize(DESKTOP);
  await signIn(page, suite.service.url, manager.email, '/settings/managed-users');
  await page.waitForURL((u) => u.pathname === '/settings/managed-users');
  t.truthy(await page.$('#no-managed-users'));
  await page.fill('#first_name', 'x'.repeat(101));
  await page.click('#create-managed-user button[type=submit]');
  await page.waitForSelector('#first_name-error');
  t.is(await page.$('#managed-users'), null, 'nothing was added');
  await page.fill('#first_name', 'Kim');
  await page.fill('#last_name', 'Junior');
  await page.click('#create-managed-user button[type=submit]');
  await page.waitForSelector('#managed-users');
  const id = (await page.getAttribute('#managed-users li', 'data-user-id'))!;
  t.regex((await page.textContent('#managed-users'))!, /Kim Junior/);
  await page.fill(`#last-${id}`, 'Senior');
  await page.click(`#managed-users li[data-user-id="${id}"] button:has-text("Rename")`);
  await page.waitForSelector('p.notice');
  t.regex((await page.textContent('#managed-users'))!, /Kim Senior/);
  await phoneAndDesktop(t, page, 'managed-users');
  // The manager acts for Kim through the API; deleting Kim removes her data.
  const token = await tokenFor(suite.service, manager, ['data:read', 'data:write']);
  const kim = (await api(suite.service, token, 'POST', '/api/v1/oauth/delegated-token', { sub: id })).body.access_token;
  t.is((await api(suite.service, kim, 'POST', '/api/v1/traces/', { timestamp: '2026-05-18T10:00:00Z', lactate: 2 })).status, 201);
  await page.click(`#delete-${id}`);
  await page.waitForSelector('#no-managed-users');
  t.is((await suite.service.deps.db.selectFrom('traces').select('id').where('user_id', '=', id).execute()).length, 0);
  t.is((await api(suite.service, kim, 'GET', '/api/v1/traces/')).status, 401);
  t.deepEqual(errors, []);
});

test('signed out, the pages send you to sign in; another user’s team is a 404; a cross-origin post changes nothing', async (t) => {
  const base = suite.service.url;
  for (const path of ['/settings/teams', '/settings/managed-users', '/teams/00000000-0000-4000-8000-000000000000']) {
    const res = await fetch(`${base}${path}`, { redirect: 'manual' });
    t.is(res.status, 303, path);
    t.regex(res.headers.get('location')!, /^\/signin\?next=/);
  }
  const owner = await createTestUser(suite.service);
  const other = await createTestUser(suite.service);
  const team = (
    await api(suite.service, await tokenFor(suite.service, owner, ['data:write']), 'POST', '/api/v1/teams/', { name: 'Private' })
  ).body;
  const { page } = await openPage(suite.browser);
  await signIn(page, base, other.email, '/');
  await page.waitForURL((u) => u.pathname === '/');
  const res = await page.goto(`${base}/teams/${team.id}`);
  t.is(res?.status(), 404);
  // A post from another site with the other user's cookie: refused, the team stays.
  const cookies = await page.context().cookies();
  const cross = await fetch(`${base}/teams/${team.id}/delete`, {
    method: 'POST',
    headers: { origin: 'https://evil.example', cookie: cookies.map((c) => `${c.name}=${c.value}`).join('; ') },
    redirect: 'manual',
  });
  t.is(cross.status, 403);
  t.truthy(await suite.service.deps.db.selectFrom('teams').select('id').where('id', '=', team.id).executeTakeFirst());
});

test('act as: a coach opens an athlete’s activities under a banner on every page, may not change them with read access, and goes back; a withdrawn share ends it on the next page', async (t) => {
  const base = suite.service.url;
  const coach = await createTestUser(suite.service, { first_name: 'Cees', last_name: 'Coach' });
  const athlete = await createTestUser(suite.service, { first_name: 'Anna', last_name: 'Athlete' });
  const athleteToken = await tokenFor(suite.service, athlete, ['data:read', 'data:write']);
  await ride(athleteToken);
  const coachToken = await tokenFor(suite.service, coach, ['data:read', 'data:write']);
  const teamId = (await api(suite.service, coachToken, 'POST', '/api/v1/teams/', { name: 'Acting' })).body.id as string;
  await api(suite.service, athleteToken, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes: ['data:read'] });
  const activityId = (await api(suite.service, athleteToken, 'GET', '/api/v1/activities/')).body[0].id as string;

  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page, [{ url: `${base}/activities/${activityId}/delete`, status: 403 }]);
  await page.setViewportSize(DESKTOP);
  await signIn(page, base, coach.email, `/teams/${teamId}`);
  await page.waitForURL((u) => u.pathname === `/teams/${teamId}`);
  t.is(await page.$('#acting-banner'), null);
  await page.click(`#act-as-${athlete.id}`);
  await page.waitForURL((u) => u.pathname === '/activities');
  t.regex((await page.textContent('#acting-banner'))!, /acting as Anna Athlete \(read only\)/);
  t.is(await page.locator(`a[href="/activities/${activityId}"]`).count(), 1, 'the athlete’s ride is listed');
  await phoneAndDesktop(t, page, 'acting-activities');
  // Every page carries the banner, Settings too (which stay the coach's own).
  await page.goto(`${base}/settings`);
  t.truthy(await page.$('#acting-banner'));
  t.is((await page.textContent('#account-email'))?.trim(), coach.email);
  // The activity page, its charts from the API as the athlete; deleting needs write access: refused, nothing deleted.
  await page.goto(`${base}/activities/${activityId}`);
  t.truthy(await page.$('#acting-banner'));
  const refused = await page.evaluate(async (id) => {
    const form = new FormData();
    form.set('confirm', '1');
    return (await fetch(`/activities/${id}/delete`, { method: 'POST', body: new URLSearchParams(form as never) })).status;
  }, activityId);
  t.is(refused, 403);
  t.is((await api(suite.service, athleteToken, 'GET', `/api/v1/activities/${activityId}`)).status, 200);
  // Back to one's own account: no banner, the coach's own (empty) list.
  await page.click('#stop-acting');
  await page.waitForURL((u) => u.pathname === '/settings/teams');
  t.is(await page.$('#acting-banner'), null);
  await page.goto(`${base}/activities`);
  t.is(await page.locator(`a[href="/activities/${activityId}"]`).count(), 0);
  // Acting again, then the athlete stops sharing: the next page is the coach's own, without the banner.
  await page.goto(`${base}/teams/${teamId}`);
  await page.click(`#act-as-${athlete.id}`);
  await page.waitForSelector('#acting-banner');
  t.is((await api(suite.service, athleteToken, 'DELETE', `/api/v1/teams/${teamId}/authorize`)).status, 204);
  await page.goto(`${base}/activities`);
  t.is(await page.$('#acting-banner'), null);
  t.is(await page.locator(`a[href="/activities/${activityId}"]`).count(), 0);
  t.deepEqual(errors, []);
});

test('act as a managed user: the manager uploads for them in the browser under the banner; the change names the manager', async (t) => {
  const base = suite.service.url;
  const manager = await createTestUser(suite.service, { first_name: 'Maria', last_name: 'Manager' });
  const managerToken = await tokenFor(suite.service, manager, ['data:read', 'data:write']);
  const kid = (await api(suite.service, managerToken, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: 'Kid' })).body.id as string;
  const { page } = await openPage(suite.browser);
  const errors = collectErrors(page);
  await page.setViewportSize(DESKTOP);
  await signIn(page, base, manager.email, '/settings/managed-users');
  await page.waitForURL((u) => u.pathname === '/settings/managed-users');
  await page.click(`#act-as-${kid}`);
  await page.waitForURL((u) => u.pathname === '/activities');
  t.regex((await page.textContent('#acting-banner'))!, /acting as Kim Kid \(read and write\)/);
  // A trace written by the page's own API call (the cookie): Kim's, with Maria as who acted.
  const status = await page.evaluate(async () => {
    const res = await fetch('/api/v1/traces/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timestamp: '2026-05-18T10:00:00Z', lactate: 1.9 }),
    });
    return res.status;
  });
  t.is(status, 201);
  const events = await suite.service.deps.db.selectFrom('events').select(['type', 'actor_id']).where('user_id', '=', kid).execute();
  t.deepEqual(events, [{ type: 'trace_created', actor_id: manager.id }]);
  await phoneAndDesktop(t, page, 'acting-managed');
  t.deepEqual(errors, []);
});
