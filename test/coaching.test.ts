import test from 'ava';
import { createPersonalToken } from '../api/services/oauth/issue.ts';
import { api } from './helpers/activities.ts';
import { loggedPath } from '../api/http/middleware/request-context.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { authorizeAndDecide, pkcePair, postToken, signedIn } from './helpers/oauth.ts';

/**
 * Managed users, teams and delegation (docs/coaching.md) with the request shapes SweatStack's Python
 * client sends (users.py, teams.py, delegated_client, principal_client): JSON creates, a form-encoded
 * PUT, `{sub, team_id}` delegation bodies; and revocation taking effect on the next request.
 */

let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const form = (token: string, method: string, path: string, fields: Record<string, string>) =>
  fetch(service.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

/** A user with a personal token of every data scope and offline_access (a refresh token comes with it). */
async function person(first: string, last: string) {
  const user = await createTestUser(service, { first_name: first, last_name: last });
  const { response } = await createPersonalToken(
    service.deps.db,
    service.deps.tokens,
    user.id,
    ['data:read', 'data:write', 'profile', 'offline_access'],
    'test',
  );
  return { user, token: response.access_token, refresh: response.refresh_token! };
}

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, any>;

test('managed users: create (JSON, last_name null), retrieve, update (form-encoded, partial), list, delegate, delete', async (t) => {
  const coach = await person('Carla', 'Coach');
  const created = await api(service, coach.token, 'POST', '/api/v1/users/', { first_name: 'Bob', last_name: null });
  t.is(created.status, 201);
  t.like(created.body, { first_name: 'Bob', last_name: null, display_name: 'Bob', is_managed: true, admin: false });
  t.regex(created.body.registered_at, /Z$/);
  const id = created.body.id as string;

  const renamed = await form(coach.token, 'PUT', `/api/v1/users/${id}`, { last_name: 'Smit' });
  t.is(renamed.status, 200);
  t.like(renamed.body, { first_name: 'Bob', last_name: 'Smit', display_name: 'Bob Smit' });
  t.like((await api(service, coach.token, 'GET', `/api/v1/users/${id}`)).body, { id, display_name: 'Bob Smit' });
  // Not a managed user of theirs: yourself, and someone else's, are 404.
  t.is((await api(service, coach.token, 'GET', `/api/v1/users/${coach.user.id}`)).status, 404);
  const other = await person('Olga', 'Other');
  t.is((await api(service, other.token, 'GET', `/api/v1/users/${id}`)).status, 404);
  t.is((await form(other.token, 'PUT', `/api/v1/users/${id}`, { first_name: 'X' })).status, 404);
  t.is((await api(service, other.token, 'DELETE', `/api/v1/users/${id}`)).status, 404);

  const list = await api(service, coach.token, 'GET', '/api/v1/users/');
  t.deepEqual(
    list.body.map((u: any) => [u.display_name, u.is_managed, u.scopes]),
    [
      ['Carla Coach', false, ['data:read', 'data:write', 'profile', 'offline_access']],
      ['Bob Smit', true, ['data:read', 'data:write', 'profile']],
    ],
  );
  t.deepEqual((await api(service, coach.token, 'GET', '/api/v1/users/?include_managed=false')).body.length, 1);
  t.deepEqual(
    (await api(service, coach.token, 'GET', '/api/v1/users/?name=SMI')).body.map((u: any) => u.id),
    [id],
  );

  // Act as Bob: his data is written as his; the token says who acts.
  const delegated = await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', { sub: id });
  t.is(delegated.status, 200);
  t.like(delegated.body, { token_type: 'Bearer', sub: id, team_id: null, scope: 'data:read data:write profile' });
  t.is(typeof delegated.body.refresh_token, 'string', 'the coach’s grant has offline_access');
  t.like(claims(delegated.body.access_token), { sub: id, act: { sub: coach.user.id } });
  const bob = delegated.body.access_token as string;
  const trace = await api(service, bob, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T10:00:00Z', lactate: 2.1 });
  t.is(trace.status, 201);
  t.is((await api(service, bob, 'GET', '/api/v1/traces/')).body.length, 1);
  t.is((await api(service, coach.token, 'GET', '/api/v1/traces/')).body.length, 0, 'the trace is Bob’s, not the coach’s');
  t.like((await api(service, bob, 'GET', '/api/v1/oauth/userinfo')).body, { sub: id, name: 'Bob Smit', email: null });
  // Account endpoints refuse a delegated token; the principal token gives the coach back.
  t.is((await api(service, bob, 'GET', '/api/v1/users/')).status, 403);
  t.is((await api(service, bob, 'POST', '/api/v1/oauth/delegated-token', { sub: id })).status, 403);
  t.is((await api(service, bob, 'POST', '/api/v1/applications', { name: 'x' })).status, 403);
  const principal = await api(service, bob, 'GET', '/api/v1/oauth/principal-token');
  t.is(principal.status, 200);
  t.like(principal.body, { sub: coach.user.id, refresh_token: null });
  t.is(claims(principal.body.access_token).act, undefined);
  t.is((await api(service, principal.body.access_token, 'GET', '/api/v1/users/')).status, 200);

  // Deleting Bob ends the delegated token at once and removes his data, with its event.
  t.is((await api(service, coach.token, 'DELETE', `/api/v1/users/${id}`)).status, 204);
  t.is((await api(service, bob, 'GET', '/api/v1/traces/')).status, 401);
  t.is((await api(service, coach.token, 'GET', `/api/v1/users/${id}`)).status, 404);
  t.is((await service.deps.db.selectFrom('traces').select('id').where('user_id', '=', id).execute()).length, 0);
  const events = await service.deps.db.selectFrom('events').select(['type', 'resource_id']).where('user_id', '=', id).execute();
  t.deepEqual(events.map((e) => e.type).sort(), ['trace_created', 'trace_deleted']);
  // The refresh token of the ended delegation is refused.
  const refreshed = await fetch(`${service.url}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: delegated.body.refresh_token }).toString(),
  });
  t.is(refreshed.status, 400);
});

test('teams: an athlete authorises a team; its coach lists and acts within the granted scopes; revoking ends it on the next request', async (t) => {
  const owner = await person('Olivia', 'Owner');
  const coach = await person('Cees', 'Coach');
  const athlete = await person('Anna', 'Athlete');
  const stranger = await person('Sam', 'Stranger');

  const team = await api(service, owner.token, 'POST', '/api/v1/teams/', { name: 'Velo Club' });
  t.is(team.status, 201);
  t.like(team.body, { name: 'Velo Club', description: '', role: 'owner' });
  t.regex(team.body.url, /^http/);
  const teamId = team.body.id as string;
  const invitation = await api(service, owner.token, 'POST', `/api/v1/teams/${teamId}/invitations`, {});
  t.is(invitation.status, 201);
  t.is((await api(service, coach.token, 'POST', '/api/v1/teams/join', { invitation: invitation.body.url })).status, 200);
  t.is((await api(service, stranger.token, 'POST', '/api/v1/teams/join', { invitation: invitation.body.url })).status, 404, 'single use');
  t.deepEqual(
    (await api(service, coach.token, 'GET', '/api/v1/teams/')).body.map((x: any) => [x.name, x.role]),
    [['Velo Club', 'member']],
  );

  // Before the athlete authorises: nothing to see or act on.
  t.deepEqual((await api(service, coach.token, 'GET', `/api/v1/teams/${teamId}/users`)).body, []);
  const refused = await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', { sub: athlete.user.id, team_id: teamId });
  const unknown = await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', { sub: crypto.randomUUID(), team_id: teamId });
  t.is(refused.status, 403);
  t.deepEqual([unknown.status, unknown.body], [refused.status, refused.body], 'the same answer whether or not the user exists');

  const granted = await api(service, athlete.token, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes: ['data:read'] });
  t.deepEqual(granted.body, { team_id: teamId, user_id: athlete.user.id, scopes: ['data:read'] });
  t.like((await api(service, athlete.token, 'GET', '/api/v1/teams/authorized')).body[0], { id: teamId, scopes: ['data:read'] });
  t.deepEqual(
    (await api(service, coach.token, 'GET', `/api/v1/teams/${teamId}/users?name=anna`)).body.map((u: any) => [
      u.display_name,
      u.scopes,
      u.is_managed,
    ]),
    [['Anna Athlete', ['data:read'], false]],
  );
  t.is((await api(service, stranger.token, 'GET', `/api/v1/teams/${teamId}/users`)).status, 404);
  t.is(
    (await api(service, stranger.token, 'POST', '/api/v1/oauth/delegated-token', { sub: athlete.user.id, team_id: teamId })).status,
    403,
  );

  // Asking for write gets read only: dropped, not refused.
  const delegated = await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', {
    sub: athlete.user.id,
    team_id: teamId,
    scopes: ['data:read', 'data:write'],
  });
  t.is(delegated.status, 200);
  t.like(delegated.body, { scope: 'data:read', team_id: teamId });
  const anna = delegated.body.access_token as string;
  t.is((await api(service, anna, 'GET', '/api/v1/activities/')).status, 200);
  t.is((await api(service, anna, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T10:00:00Z', lactate: 2 })).status, 403);
  // A team's delegated token cannot share the athlete with another team.
  const other = await api(service, stranger.token, 'POST', '/api/v1/teams/', { name: 'Other' });
  t.is((await api(service, anna, 'POST', `/api/v1/teams/${other.body.id}/authorize`, { scopes: ['data:read'] })).status, 403);

  // Whoami: the coach's list holds the athlete, so the client finds `sub` in it.
  t.true((await api(service, coach.token, 'GET', '/api/v1/users/')).body.some((u: any) => u.id === athlete.user.id));

  // Revoking: the next request with the delegated token fails.
  t.is((await api(service, athlete.token, 'DELETE', `/api/v1/teams/${teamId}/authorize`)).status, 204);
  t.is((await api(service, anna, 'GET', '/api/v1/activities/')).status, 401);
  t.deepEqual((await api(service, coach.token, 'GET', `/api/v1/teams/${teamId}/users`)).body, []);
});

test('leaving the team ends the coach’s delegated tokens; a downgrade to read narrows a write token at once', async (t) => {
  const owner = await person('Olivia', 'Owner');
  const coach = await person('Cees', 'Coach');
  const athlete = await person('Anna', 'Athlete');
  const teamId = (await api(service, owner.token, 'POST', '/api/v1/teams/', { name: 'Lab' })).body.id as string;
  const link = (await api(service, owner.token, 'POST', `/api/v1/teams/${teamId}/invitations`, { role: 'coach' })).body.url as string;
  await api(service, coach.token, 'POST', '/api/v1/teams/join', { invitation: link });
  await api(service, athlete.token, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes: ['data:read', 'data:write'] });
  const write = (await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', { sub: athlete.user.id })).body;
  t.is(write.scope, 'data:read data:write', 'without team_id: the team that grants the most');
  t.is((await api(service, write.access_token, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T10:00:00Z', lactate: 2 })).status, 201);
  await api(service, athlete.token, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes: ['data:read'] });
  t.is((await api(service, write.access_token, 'POST', '/api/v1/traces/', { timestamp: '2026-01-01T11:00:00Z', lactate: 2 })).status, 403);
  t.is((await api(service, write.access_token, 'GET', '/api/v1/traces/')).status, 200);
  // The last owner cannot leave; the coach can, and their token fails on its next use.
  t.is((await api(service, owner.token, 'DELETE', `/api/v1/teams/${teamId}/members/${owner.user.id}`)).status, 409);
  t.is((await api(service, coach.token, 'DELETE', `/api/v1/teams/${teamId}/members/${coach.user.id}`)).status, 204);
  t.is((await api(service, write.access_token, 'GET', '/api/v1/traces/')).status, 401);
});

test('bad input: names of 10,000 characters or with NUL are 422 and nothing is created; unknown team scopes are 422', async (t) => {
  const coach = await person('Carla', 'Coach');
  for (const body of [
    { first_name: 'x'.repeat(10_000), last_name: null },
    { first_name: 'a\u0000b', last_name: null },
    { last_name: 'x' },
  ]) {
    const res = await api(service, coach.token, 'POST', '/api/v1/users/', body);
    t.is(res.status, 422);
    t.truthy(res.body.detail);
  }
  t.is((await api(service, coach.token, 'POST', '/api/v1/teams/', { name: 'n'.repeat(10_000) })).status, 422);
  t.is((await api(service, coach.token, 'POST', '/api/v1/teams/', { name: 'a\u0000' })).status, 422);
  t.deepEqual((await api(service, coach.token, 'GET', '/api/v1/users/')).body.length, 1);
  t.deepEqual((await api(service, coach.token, 'GET', '/api/v1/teams/')).body, []);
  const team = (await api(service, coach.token, 'POST', '/api/v1/teams/', { name: 'T' })).body;
  const bad = await api(service, coach.token, 'POST', `/api/v1/teams/${team.id}/authorize`, { scopes: ['admin'] });
  t.is(bad.status, 422);
  t.is(
    (await api(service, coach.token, 'POST', '/api/v1/teams/00000000-0000-4000-8000-000000000000/authorize', { scopes: ['data:read'] }))
      .status,
    404,
  );
});

test('profile status: capabilities and no issue; needs data:read or profile', async (t) => {
  const user = await createTestUser(service);
  const status = await api(service, await tokenFor(service, user, ['profile']), 'GET', '/api/v1/profile/status');
  t.deepEqual(status.body, {
    issue: null,
    capabilities: { activities: 'ready', activity_history: 'ready', dailies: 'ready', workouts: 'unavailable' },
  });
  t.is((await api(service, await tokenFor(service, user, ['data:write']), 'GET', '/api/v1/profile/status')).status, 403);
});

test('a delegated refresh token refreshes as the athlete, and revoking it (RFC 7009) ends the delegation at once', async (t) => {
  const coach = await person('Carla', 'Coach');
  const kid = (await api(service, coach.token, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: 'Kid' })).body;
  const delegated = (await api(service, coach.token, 'POST', '/api/v1/oauth/delegated-token', { sub: kid.id, scopes: ['data:read'] })).body;
  const post = (path: string, fields: Record<string, string>) =>
    fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  const refreshed = await post('/api/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: delegated.refresh_token });
  t.is(refreshed.status, 200);
  const body = (await refreshed.json()) as any;
  t.like(body, { scope: 'data:read', refresh_token: delegated.refresh_token });
  t.like(claims(body.access_token), { sub: kid.id, act: { sub: coach.user.id }, scopes: ['data:read'] });
  t.is((await api(service, body.access_token, 'GET', '/api/v1/activities/')).status, 200);
  t.is((await post('/api/v1/oauth/revoke', { token: delegated.refresh_token })).status, 200);
  t.is((await api(service, body.access_token, 'GET', '/api/v1/activities/')).status, 401);
  t.is((await api(service, delegated.access_token, 'GET', '/api/v1/activities/')).status, 401);
  t.is((await post('/api/v1/oauth/token', { grant_type: 'refresh_token', refresh_token: delegated.refresh_token })).status, 400);
  // The coach's own token is untouched.
  t.is((await api(service, coach.token, 'GET', '/api/v1/users/')).status, 200);
});

test('a team id in the delegated-token body must be a team of the caller that the athlete authorised: another team’s id is refused', async (t) => {
  const coachX = await person('Xavi', 'Coach');
  const coachY = await person('Yara', 'Coach');
  const athlete = await person('Anna', 'Athlete');
  const teamX = (await api(service, coachX.token, 'POST', '/api/v1/teams/', { name: 'X' })).body.id as string;
  const teamY = (await api(service, coachY.token, 'POST', '/api/v1/teams/', { name: 'Y' })).body.id as string;
  await api(service, athlete.token, 'POST', `/api/v1/teams/${teamX}/authorize`, { scopes: ['data:read'] });
  const ask = (token: string, team_id?: string) =>
    api(service, token, 'POST', '/api/v1/oauth/delegated-token', { sub: athlete.user.id, ...(team_id ? { team_id } : {}) });
  t.is((await ask(coachX.token, teamX)).status, 200);
  // Yara names team X (not hers), her own team Y (not authorised), or none: refused alike.
  const refusals = await Promise.all([ask(coachY.token, teamX), ask(coachY.token, teamY), ask(coachY.token)]);
  t.deepEqual(
    refusals.map((r) => r.status),
    [403, 403, 403],
  );
  t.is(new Set(refusals.map((r) => JSON.stringify(r.body))).size, 1, 'one answer for every refusal');
  // Nor can she read the athlete through team X's page of users.
  t.is((await api(service, coachY.token, 'GET', `/api/v1/teams/${teamX}/users`)).status, 404);
});

test('a managed user’s id in /oauth/authorize changes nothing: the code is the signed-in user’s, and a managed user cannot sign in', async (t) => {
  const coach = await person('Carla', 'Coach');
  const kid = (await api(service, coach.token, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: null })).body.id as string;
  const app = await createTestApplication(service, coach.user, { redirect_uris: ['https://app.example/callback'] });
  const web = await signedIn(service, coach.user);
  const pkce = pkcePair();
  const where = await authorizeAndDecide(web, {
    response_type: 'code',
    client_id: app.id,
    redirect_uri: 'https://app.example/callback',
    scope: 'data:read',
    state: 's',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    // Parameters an attacker might try to name the managed user with:
    sub: kid,
    user_id: kid,
    login_hint: kid,
  });
  const exchanged = await postToken(service.url, {
    grant_type: 'authorization_code',
    code: where.searchParams.get('code')!,
    redirect_uri: 'https://app.example/callback',
    client_id: app.id,
    code_verifier: pkce.verifier,
  });
  t.is(exchanged.status, 200);
  t.is(claims(String(exchanged.body.access_token)).sub, coach.user.id);
  // No email, no password: the sign-in form has nothing to match (an empty email is refused like any wrong one).
  const signIn = await fetch(`${service.url}/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url },
    body: new URLSearchParams({ email: '', password: '' }).toString(),
    redirect: 'manual',
  });
  t.not(signIn.status, 303);
});

test('an invitation link’s secret is left out of the request log line and the in-flight list', (t) => {
  t.is(loggedPath('/teams/join/tds_inv_abcdef'), '/teams/join/[secret]');
  t.is(loggedPath('/teams/0a24e2b9-4010-41fb-85ec-d09fe41b4c34'), '/teams/0a24e2b9-4010-41fb-85ec-d09fe41b4c34');
  t.is(loggedPath('/api/v1/teams/join'), '/api/v1/teams/join', 'the API takes the link in its body');
});

test('without offline_access in the caller’s grant a delegated token has no refresh token (the key is there, null)', async (t) => {
  const coach = await createTestUser(service, { first_name: 'Carla' });
  const token = await tokenFor(service, coach, ['data:read', 'data:write']);
  const kid = (await api(service, token, 'POST', '/api/v1/users/', { first_name: 'Kim', last_name: null })).body.id as string;
  const delegated = await api(service, token, 'POST', '/api/v1/oauth/delegated-token', { sub: kid });
  t.is(delegated.status, 200);
  t.true('refresh_token' in delegated.body);
  t.is(delegated.body.refresh_token, null);
  t.is(delegated.body.scope, 'data:read data:write', 'profile is not in the caller’s token, so not in the delegated one');
  t.is(
    (await service.deps.db.selectFrom('delegations').select('refresh_token_hash').where('user_id', '=', kid).executeTakeFirstOrThrow())
      .refresh_token_hash,
    null,
  );
});
