import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createGrant } from '../db/grants.ts';
import { tokenResponse } from '../api/services/oauth/issue.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';

/**
 * Issue 40's "each call of the client's users.py, teams.py and its delegation code, with the request
 * shapes that code sends": python `requests` replaying SweatStack's Python client call by call (the
 * same methods, paths, query parameters only when not at their default, JSON or form bodies, the keys
 * it reads with `[]`, its whoami: `sub` decoded from the JWT, looked up in the principal's user list;
 * its refresh: a form with `client_id` and an empty `client_secret`, the expired bearer still sent).
 * Each response is checked against the fields the client's pydantic models require. (.ci/run makes sure python3 has requests.)
 */
let service: TestService;
test.before(async () => {
  service = await startTestService();
});
test.after.always(() => service?.close());

const SCRIPT = String.raw`
import base64, json, sys, requests
url, client_id, coach_access, coach_refresh, athlete_access = sys.argv[1:6]
out = {}

def bearer(token):
    s = requests.Session()
    s.headers['Authorization'] = 'Bearer ' + token
    s.headers['User-Agent'] = 'python-sweatstack/test'
    return s

def ok(r):
    if r.status_code >= 300:
        raise Exception('%s %s -> %d %s' % (r.request.method, r.request.path_url, r.status_code, r.text[:300]))
    return r

def decode_sub(token):
    body = token.split('.')[1]
    return json.loads(base64.urlsafe_b64decode(body + '=' * (-len(body) % 4)))['sub']

USER_SUMMARY = {'id', 'first_name', 'last_name', 'scopes', 'display_name', 'is_managed'}
USER_RESPONSE = {'id', 'first_name', 'last_name', 'admin', 'registered_at', 'display_name', 'is_managed'}
TEAM = {'id', 'name', 'description', 'url', 'image', 'privacy_statement'}

def check(obj, keys, what):
    missing = keys - set(obj)
    if missing:
        raise Exception('%s lacks %s: %s' % (what, sorted(missing), obj))
    for k in ('url', 'image', 'privacy_statement'):
        if k in keys and not obj[k].startswith(('http://', 'https://')):
            raise Exception('%s.%s is no absolute URL: %s' % (what, k, obj[k]))
    return obj

def principal_client(token):
    tokens = ok(bearer(token).get(url + '/api/v1/oauth/principal-token')).json()
    return tokens['access_token'], tokens['refresh_token']

def users_list(token, include_managed=True, include_shared=True, name=None):
    params = {}
    if not include_managed: params['include_managed'] = False
    if not include_shared: params['include_shared'] = False
    if name is not None: params['name'] = name
    principal, _ = principal_client(token)
    users = [check(u, USER_SUMMARY, 'UserSummary') for u in ok(bearer(principal).get(url + '/api/v1/users/', params=params)).json()]
    return [u for u in users if name is None or name.casefold() in u['display_name'].casefold()]

def delegated_client(token, user_id, team_id=None):
    body = {'sub': user_id}
    if team_id is not None: body['team_id'] = team_id
    tokens = ok(bearer(token).post(url + '/api/v1/oauth/delegated-token', json=body)).json()
    return tokens['access_token'], tokens['refresh_token']

def whoami(token):
    sub = decode_sub(token)
    return next(u for u in users_list(token) if u['id'] == sub)

def refresh(expired_access, refresh_token):
    r = bearer(expired_access).post(url + '/api/v1/oauth/token', data={
        'grant_type': 'refresh_token', 'refresh_token': refresh_token, 'client_id': client_id, 'client_secret': None or ''})
    return ok(r).json()['access_token']

coach = bearer(coach_access)
# users.py
junior = check(ok(coach.post(url + '/api/v1/users/', json={'first_name': 'Bob', 'last_name': None})).json(), USER_RESPONSE, 'UserResponse')
out['create'] = junior
out['retrieve'] = check(ok(coach.get(url + '/api/v1/users/' + junior['id'])).json(), USER_RESPONSE, 'UserResponse')
out['update'] = check(ok(coach.put(url + '/api/v1/users/' + junior['id'], data={'last_name': 'Smit'})).json(), USER_RESPONSE, 'UserResponse')
out['list'] = users_list(coach_access)
out['list_named'] = users_list(coach_access, name='smit')
out['list_shared_only'] = users_list(coach_access, include_managed=False)
# teams.py, as the athlete and the coach
team = check(ok(coach.post(url + '/api/v1/teams/', json={'name': 'Velo'})).json(), TEAM | {'role'}, 'TeamResponse')
out['authorize'] = ok(bearer(athlete_access).post(url + '/api/v1/teams/%s/authorize' % team['id'], json={'scopes': ['data:read']})).json()
out['authorized'] = [check(x, TEAM | {'scopes'}, 'AuthorizedTeamResponse') for x in ok(bearer(athlete_access).get(url + '/api/v1/teams/authorized')).json()]
out['teams'] = [check(x, TEAM | {'role'}, 'TeamResponse') for x in ok(coach.get(url + '/api/v1/teams/')).json()]
athletes = [check(u, USER_SUMMARY, 'UserSummary') for u in ok(coach.get(url + '/api/v1/teams/%s/users' % team['id'])).json()]
out['team_users'] = athletes
# delegation: the athlete through the team, the managed user without one
athlete_token, athlete_refresh = delegated_client(coach_access, athletes[0]['id'], team_id=team['id'])
out['athlete_activities'] = ok(bearer(athlete_token).get(url + '/api/v1/activities/')).status_code
out['whoami_delegated'] = whoami(athlete_token)
out['users_list_from_delegated'] = [u['id'] for u in users_list(athlete_token)]
junior_token, junior_refresh = delegated_client(coach_access, junior['id'])
out['junior_refresh_token'] = junior_refresh is not None
out['junior_trace'] = ok(bearer(junior_token).post(url + '/api/v1/traces/', json={'timestamp': '2026-01-01T10:00:00Z', 'lactate': 1.8})).status_code
out['junior_refreshed_sub'] = decode_sub(refresh(junior_token, junior_refresh))
out['coach_refreshed_sub'] = decode_sub(refresh(coach_access, coach_refresh))
out['whoami'] = whoami(coach_access)
out['profile_status'] = ok(bearer(junior_token).get(url + '/api/v1/profile/status')).json()
# users.delete, then the delegated client is refused
ok(coach.delete(url + '/api/v1/users/' + junior['id']))
out['after_delete'] = bearer(junior_token).get(url + '/api/v1/traces/').status_code
out['retrieve_deleted'] = coach.get(url + '/api/v1/users/' + junior['id']).status_code
print(json.dumps(out))
`;

test("SweatStack's client calls, replayed with python requests: users, teams, delegation, principal token, whoami, refresh", async (t) => {
  const coach = await createTestUser(service, { first_name: 'Carla', last_name: 'Coach' });
  const athlete = await createTestUser(service, { first_name: 'Anna', last_name: 'Athlete' });
  const app = await createTestApplication(service, coach, { name: 'Coaching app' });
  const grant = async (user: typeof coach) => {
    const made = await createGrant(service.deps.db, {
      user_id: user.id,
      application_id: app.id,
      scopes: ['data:read', 'data:write', 'profile', 'offline_access'],
      withRefreshToken: true,
    });
    return tokenResponse(service.deps.tokens, made.grant, made.refreshToken);
  };
  const coachTokens = await grant(coach);
  const athleteTokens = await grant(athlete);
  const dir = mkdtempSync(join(os.tmpdir(), 'py-coaching-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'client.py');
  writeFileSync(script, SCRIPT);
  const run = await promisify(execFile)(
    'python3',
    [script, service.url, app.id, coachTokens.access_token, coachTokens.refresh_token!, athleteTokens.access_token],
    { encoding: 'utf8', timeout: 120_000 },
  ).catch((err: { stderr?: string; message: string }) => {
    throw new Error(err.stderr || err.message);
  });
  const out = JSON.parse(run.stdout) as Record<string, any>;
  t.like(out.create, { first_name: 'Bob', last_name: null, is_managed: true });
  t.like(out.update, { first_name: 'Bob', last_name: 'Smit', display_name: 'Bob Smit' });
  t.deepEqual(
    out.list.map((u: any) => u.display_name),
    ['Carla Coach', 'Bob Smit'],
  );
  t.deepEqual(
    out.list_named.map((u: any) => u.display_name),
    ['Bob Smit'],
  );
  t.deepEqual(
    out.list_shared_only.map((u: any) => u.display_name),
    ['Carla Coach'],
  );
  t.like(out.authorize, { user_id: athlete.id, scopes: ['data:read'] });
  t.like(out.authorized[0], { name: 'Velo', scopes: ['data:read'] });
  t.like(out.teams[0], { name: 'Velo', role: 'owner' });
  t.deepEqual(
    out.team_users.map((u: any) => [u.display_name, u.scopes]),
    [['Anna Athlete', ['data:read']]],
  );
  t.is(out.athlete_activities, 200);
  t.like(out.whoami_delegated, { id: athlete.id, display_name: 'Anna Athlete' });
  t.true(out.users_list_from_delegated.includes(athlete.id));
  t.true(out.junior_refresh_token);
  t.is(out.junior_trace, 201);
  t.is(out.junior_refreshed_sub, out.create.id, 'a delegated refresh token refreshes as the managed user');
  t.is(out.coach_refreshed_sub, coach.id);
  t.like(out.whoami, { id: coach.id });
  t.like(out.profile_status, { issue: null });
  t.is(out.after_delete, 401);
  t.is(out.retrieve_deleted, 404);
});
