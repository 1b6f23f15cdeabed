import test from 'ava';
import { createGrant, deleteGrant } from '../db/grants.ts';
import { createPersonalToken, tokenResponse } from '../api/services/oauth/issue.ts';
import type { User } from '../db/database.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';

/**
 * Issue 40's authorisation matrix: every operation of `/openapi.json` × every kind of caller → the
 * exact outcome, from one table (OPERATIONS) that must name every operation, so an endpoint cannot be
 * added without its row. The data belongs to athlete A (or, for the manager, to managed user M):
 *
 *   owner        A's own application token
 *   manager      C's delegated token for M, C's managed user
 *   coachRead    C's delegated token for A through team T1 (A granted data:read)
 *   coachWrite   C's delegated token for A through team T2 (A granted data:read and data:write)
 *   otherTeam    O's own token; O coaches team T3, which A never authorised
 *   formerMember F's delegated token for A through T1, made before F left T1
 *   revoked      R's delegated token for A through T4, made before A withdrew T4's access
 *   stranger     S's own personal token
 *   noConsent    A's application token whose grant A then revoked (consent withdrawn)
 *
 * Outcomes: `ok` (past every check: not 401, 403 or 404), a status, or for lists `rows` (the owner's
 * rows in the answer) and `none` (not one of them). A list is compared by the ids it holds.
 */

type Who = 'owner' | 'manager' | 'coachRead' | 'coachWrite' | 'otherTeam' | 'formerMember' | 'revoked' | 'stranger' | 'noConsent';
const CALLERS: Who[] = ['manager', 'coachRead', 'coachWrite', 'otherTeam', 'formerMember', 'revoked', 'stranger', 'noConsent', 'owner'];
type Outcome = 'ok' | 'rows' | 'none' | 401 | 403 | 404;

/**
 * The kinds of operation, each an outcome per caller:
 * - `public`: no credential needed (not called here).
 * - `item`: a read of one of the owner's resources by id; `list`: a list of the caller's own (or acted-as) rows;
 *   `self`: a read of the caller's own account data with no id (profile, dailies, curves).
 * - `write`: a change to one of the owner's resources by id; `create`: a write into the caller's own (or acted-as) account.
 * - `account`: managing an account (teams, managed users, applications): a delegated token is refused.
 * - `app-…`: the same, on an application's own metadata: a token without an application is refused.
 */
type Kind = 'public' | 'item' | 'list' | 'self' | 'write' | 'create' | 'account' | 'app-write' | 'app-self' | 'app-create';
const DELEGATED: Who[] = ['manager', 'coachRead', 'coachWrite'];
const DEAD: Who[] = ['formerMember', 'revoked', 'noConsent'];

function byKind(kind: Exclude<Kind, 'public' | 'account'>, who: Who): Outcome {
  if (DEAD.includes(who)) return 401;
  // App metadata is an application's own: a personal token (the stranger's) is refused first.
  if (kind.startsWith('app-')) return who === 'stranger' ? 403 : byKind(kind.slice(4) as 'write' | 'self' | 'create', who);
  const trusted = who === 'owner' || DELEGATED.includes(who);
  switch (kind) {
    case 'item':
      return trusted ? 'ok' : 404;
    case 'list':
      return trusted ? 'rows' : 'none';
    case 'self':
      return 'ok';
    case 'write':
      return who === 'coachRead' ? 403 : trusted ? 'ok' : 404;
    case 'create':
      return who === 'coachRead' ? 403 : 'ok';
    default:
      throw new Error(`no outcome for ${kind}`);
  }
}

/** An account operation: a delegated token gets 403 unless `delegated` says otherwise; dead tokens 401; the rest per `own`. */
function account(own: Partial<Record<Who, Outcome>> & { default: Outcome }, delegated: Partial<Record<Who, Outcome>> = {}) {
  return (who: Who): Outcome => {
    if (DEAD.includes(who)) return 401;
    if (DELEGATED.includes(who)) return delegated[who] ?? 403;
    return own[who] ?? own.default;
  };
}

/** Every operation, in the document's order: its kind, or for account operations the outcome per caller. */
const OPERATIONS: Record<string, Kind | ((who: Who) => Outcome)> = {
  'GET /healthz': 'public',
  'GET /readyz': 'public',
  'GET /.well-known/openid-configuration': 'public',
  'GET /api/v1/.well-known/openid-configuration': 'public',
  'GET /.well-known/oauth-authorization-server': 'public',
  'GET /api/v1/.well-known/oauth-authorization-server': 'public',
  'GET /.well-known/jwks.json': 'public',
  'GET /api/v1/.well-known/jwks.json': 'public',
  'GET /oauth/authorize': 'public',
  'POST /api/v1/oauth/token': 'public',
  'POST /oauth/token': 'public',
  'POST /api/v1/oauth/revoke': 'public',
  'POST /oauth/revoke': 'public',
  // profile scope: the coaches' team tokens hold data scopes only.
  'GET /api/v1/oauth/userinfo': account({ default: 'ok' }, { manager: 'ok' }),
  'POST /api/v1/oauth/userinfo': account({ default: 'ok' }, { manager: 'ok' }),
  // First-party only: every caller here but the stranger holds an application token.
  'POST /api/v1/applications': account({ default: 403, stranger: 'ok' }),
  'GET /api/v1/applications': account({ default: 403, stranger: 'ok' }),
  'PUT /api/v1/applications/{application_id}/page': account({ default: 403, stranger: 404 }),
  // `sub` is A: nobody here may act as A but through a team, and a delegated token never mints another.
  'POST /api/v1/oauth/delegated-token': account({ default: 403 }),
  'GET /api/v1/oauth/principal-token': account({ default: 'ok' }, { manager: 'ok', coachRead: 'ok', coachWrite: 'ok' }),
  'GET /api/v1/users/': account({ default: 'ok' }),
  'POST /api/v1/users/': account({ default: 'ok' }),
  // M is C's managed user: nobody else's.
  'GET /api/v1/users/{user_id}': account({ default: 404 }),
  'PUT /api/v1/users/{user_id}': account({ default: 404 }),
  'DELETE /api/v1/users/{user_id}': account({ default: 404 }),
  'GET /api/v1/teams/': account({ default: 'ok' }),
  'POST /api/v1/teams/': account({ default: 'ok' }),
  // Authorising is the athlete's (or a manager's for their managed user), never a team's token.
  'GET /api/v1/teams/authorized': account({ default: 'ok' }, { manager: 'ok' }),
  // TA is A's own team (the owner runs last, so deleting it leaves the others' answers as they were).
  'GET /api/v1/teams/{team_id}': account({ default: 404, owner: 'ok' }),
  'PUT /api/v1/teams/{team_id}': account({ default: 404, owner: 'ok' }),
  'DELETE /api/v1/teams/{team_id}': account({ default: 404, owner: 'ok' }),
  'GET /api/v1/teams/{team_id}/users': account({ default: 404 }),
  // Anyone may authorise a team they know the id of (TA here), and withdraw it after; a manager for their managed user.
  // (the owner has deleted TA by then)
  'POST /api/v1/teams/{team_id}/authorize': account({ default: 'ok', owner: 404 }, { manager: 'ok' }),
  'DELETE /api/v1/teams/{team_id}/authorize': account({ default: 'ok', owner: 404 }, { manager: 'ok' }),
  'POST /api/v1/teams/join': account({ default: 404 }),
  'POST /api/v1/teams/{team_id}/invitations': account({ default: 404 }),
  'GET /api/v1/teams/{team_id}/invitations': account({ default: 404 }),
  'DELETE /api/v1/teams/{team_id}/invitations/{invitation_id}': account({ default: 404 }),
  'GET /api/v1/teams/{team_id}/members': account({ default: 404 }),
  'DELETE /api/v1/teams/{team_id}/members/{user_id}': account({ default: 404 }),
  'GET /api/v1/activities/': 'list',
  'GET /api/v1/activities/latest': 'list',
  'GET /api/v1/activities/backfill-status': 'self',
  'POST /api/v1/activities/backfill': 'create',
  'GET /api/v1/activities/longitudinal-data': 'self',
  'GET /api/v1/activities/longitudinal-mean-max': 'self',
  'GET /api/v1/activities/longitudinal-accumulated-work-duration': 'self',
  'GET /api/v1/activities/longitudinal-training-load': 'self',
  'GET /api/v1/activities/longitudinal-zones': 'self',
  'POST /api/v1/activities/upload': 'create',
  'GET /api/v1/activities/{activity_id}': 'item',
  'GET /api/v1/activities/{activity_id}/download': 'item',
  'DELETE /api/v1/activities/{activity_id}': 'write',
  'GET /api/v1/activities/{activity_id}/data': 'item',
  'GET /api/v1/activities/{activity_id}/mean-max': 'item',
  'GET /api/v1/activities/{activity_id}/accumulated-work-duration': 'item',
  'PUT /api/v1/activities/{activity_id}/app-metadata': 'app-write',
  'DELETE /api/v1/activities/{activity_id}/app-metadata': 'app-write',
  'GET /api/v1/sources/': 'list',
  'GET /api/v1/sources/{source_id}': 'item',
  'GET /api/v1/traces/': 'list',
  'POST /api/v1/traces/': 'create',
  'GET /api/v1/traces/{trace_id}': 'item',
  'PUT /api/v1/traces/{trace_id}': 'write',
  'DELETE /api/v1/traces/{trace_id}': 'write',
  'PUT /api/v1/traces/{trace_id}/app-metadata': 'app-write',
  'DELETE /api/v1/traces/{trace_id}/app-metadata': 'app-write',
  'GET /api/v1/tests/': 'list',
  'POST /api/v1/tests/': 'create',
  'GET /api/v1/tests/{test_id}': 'item',
  'PUT /api/v1/tests/{test_id}': 'write',
  'DELETE /api/v1/tests/{test_id}': 'write',
  'GET /api/v1/tests/{test_id}/analysis': 'item',
  'POST /api/v1/tests/{test_id}/analysis/accept': 'write',
  'PUT /api/v1/tests/{test_id}/app-metadata': 'app-write',
  'DELETE /api/v1/tests/{test_id}/app-metadata': 'app-write',
  'GET /api/v1/profile/tags/': 'self',
  'GET /api/v1/profile/sports/': 'self',
  'GET /api/v1/profile/template-week': 'self',
  'GET /api/v1/profile/status': 'self',
  'GET /api/v1/profile/intensity-duration-model': 'self',
  'GET /api/v1/profile/thresholds': 'self',
  'PUT /api/v1/profile/thresholds': 'create',
  'GET /api/v1/profile/zones': 'self',
  'PUT /api/v1/profile/zones': 'create',
  'GET /api/v1/profile/app-metadata': 'app-self',
  'PUT /api/v1/profile/app-metadata': 'app-create',
  'DELETE /api/v1/profile/app-metadata': 'app-create',
  'POST /api/v1/dailies/{measure}': 'create',
  'GET /api/v1/dailies/{measure}': 'self',
  // The caller's own value of that day (each caller posted one just before).
  'DELETE /api/v1/dailies/{measure}': 'create',
};

function expectedOutcome(operation: string, who: Who): Outcome | undefined {
  const row = OPERATIONS[operation];
  if (row === undefined || row === 'public') return undefined;
  if (typeof row === 'function') return row(who);
  if (row === 'account') throw new Error(operation);
  return byKind(row, who);
}

let service: TestService;
test.before(async () => {
  // Hundreds of refused tokens from one address: past the failure budget they would be 429s.
  service = await startTestService({ workers: true, env: { AUTH_FAILURE_LIMIT: '100000' } });
});
test.after.always(() => service?.close());

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A ride, a trace, a test and a daily value of the account `token` acts for; the ids a call's path needs. */
async function resources(token: string, seed: number) {
  // Each set newer than the last: the newest is the one `latest` answers.
  const start = Date.now() - 3 * DAY_MS + seed * 60_000;
  const rows = Array.from(
    { length: 600 },
    (_, i) => `${new Date(start + i * 1000).toISOString()},${200 + ((i * 31 + seed) % 90)},${130 + (i % 30)}`,
  );
  const csv = new TextEncoder().encode(`timestamp,power,heart_rate\n${rows.join('\n')}\n`);
  const [source] = await uploadAndWait(service, token, [{ name: `ride-${seed}.csv`, bytes: csv }], { sport: 'cycling' });
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
  const trace = await api(service, token, 'POST', '/api/v1/traces/', { timestamp: new Date(start + 60_000).toISOString(), lactate: 1.5 });
  const lab = await api(service, token, 'POST', '/api/v1/tests/', { sport: 'cycling', start: new Date(start).toISOString() });
  const daily = await api(service, token, 'POST', '/api/v1/dailies/body_mass', { date: day(start), value: 70 + (seed % 50) });
  for (const r of [trace, lab, daily]) if (r.status >= 300) throw new Error(JSON.stringify(r.body));
  return {
    activity_id: source.activity_ids[0] as string,
    source_id: source.id as string,
    trace_id: trace.body.id,
    test_id: lab.body.id,
    date: day(start),
  };
}

interface Setup {
  tokens: Record<Who, string>;
  /** The ids of A's resources, and of M's for the manager. */
  ids: { owner: Awaited<ReturnType<typeof resources>>; managed: Awaited<ReturnType<typeof resources>> };
  account: { user_id: string; team_id: string; invitation_id: string; application_id: string };
  tokenOf: (who: Who) => string;
}

async function setUp(): Promise<Setup> {
  const people = await Promise.all(
    ['Anna', 'Cees', 'Olga', 'Fred', 'Rita', 'Sam'].map((first_name) => createTestUser(service, { first_name })),
  );
  const [A, C, O, F, R, S] = people as [User, User, User, User, User, User];
  const app = await createTestApplication(service, C, { name: 'Coaching app' });
  const appToken = async (user: User) => {
    const { grant } = await createGrant(service.deps.db, {
      user_id: user.id,
      application_id: app.id,
      scopes: ['data:read', 'data:write', 'profile'],
      withRefreshToken: false,
    });
    return { grant, token: (await tokenResponse(service.deps.tokens, grant)).access_token };
  };
  const owner = await appToken(A);
  const noConsent = await appToken(A);
  const [c, o, f, r] = (await Promise.all([C, O, F, R].map(async (u) => (await appToken(u)).token))) as [string, string, string, string];
  const stranger = (await createPersonalToken(service.deps.db, service.deps.tokens, S.id, ['data:read', 'data:write', 'profile'], 'test'))
    .response.access_token;

  const team = async (token: string, name: string) => (await api(service, token, 'POST', '/api/v1/teams/', { name })).body.id as string;
  const join = async (ownerToken: string, teamId: string, memberToken: string) => {
    const link = (await api(service, ownerToken, 'POST', `/api/v1/teams/${teamId}/invitations`, {})).body.url;
    if ((await api(service, memberToken, 'POST', '/api/v1/teams/join', { invitation: link })).status !== 200) throw new Error('join');
  };
  const t1 = await team(c, 'T1');
  const t2 = await team(c, 'T2');
  await team(o, 'T3');
  const t4 = await team(r, 'T4');
  const ta = await team(owner.token, 'TA');
  await join(c, t1, f);
  const grantTeam = (teamId: string, scopes: string[]) =>
    api(service, owner.token, 'POST', `/api/v1/teams/${teamId}/authorize`, { scopes });
  await grantTeam(t1, ['data:read']);
  await grantTeam(t2, ['data:read', 'data:write']);
  await grantTeam(t4, ['data:read']);
  const delegate = async (token: string, body: object) => {
    const res = await api(service, token, 'POST', '/api/v1/oauth/delegated-token', body);
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body.access_token as string;
  };
  const managed = (await api(service, c, 'POST', '/api/v1/users/', { first_name: 'Max', last_name: 'Managed' })).body.id as string;
  const tokens: Record<Who, string> = {
    owner: owner.token,
    manager: await delegate(c, { sub: managed }),
    coachRead: await delegate(c, { sub: A.id, team_id: t1 }),
    coachWrite: await delegate(c, { sub: A.id, team_id: t2 }),
    otherTeam: o,
    formerMember: await delegate(f, { sub: A.id, team_id: t1 }),
    revoked: await delegate(r, { sub: A.id, team_id: t4 }),
    stranger,
    noConsent: noConsent.token,
  };
  const ids = { owner: await resources(owner.token, 0), managed: await resources(tokens.manager, 1) };
  // Then the ends: F leaves T1, A withdraws T4's access, A's second grant is revoked.
  if ((await api(service, f, 'DELETE', `/api/v1/teams/${t1}/members/${F.id}`)).status !== 204) throw new Error('leave');
  if ((await api(service, owner.token, 'DELETE', `/api/v1/teams/${t4}/authorize`)).status !== 204) throw new Error('revoke');
  await deleteGrant(service.deps.db, noConsent.grant.id);
  const invitation_id = (await api(service, owner.token, 'POST', `/api/v1/teams/${ta}/invitations`, {})).body.id as string;
  return {
    tokens,
    ids,
    account: { user_id: managed, team_id: ta, invitation_id, application_id: app.id },
    tokenOf: (who) => tokens[who],
  };
}

/** A valid body for each write (so that a 404 is never hidden behind a 422), by operation. */
function bodyOf(operation: string, ids: Setup['ids']['owner']): unknown {
  const [method, path] = operation.split(' ') as [string, string];
  if (method === 'GET' || method === 'DELETE') return undefined;
  if (path.endsWith('/app-metadata')) return { note: 'x' };
  if (path.startsWith('/api/v1/traces/')) return { timestamp: `${ids.date}T10:00:00Z`, lactate: 2 };
  if (path === '/api/v1/tests/{test_id}/analysis/accept') return { heart_rate_max: 'highest' };
  if (path.startsWith('/api/v1/tests/')) return { sport: 'cycling', start: `${ids.date}T09:00:00Z` };
  if (path.startsWith('/api/v1/dailies/')) return { date: ids.date, value: 71 };
  if (path === '/api/v1/profile/thresholds') return { thresholds: [{ sport: 'cycling', valid_from: ids.date, critical_power: 250 }] };
  if (path === '/api/v1/profile/zones') return { zones: [] };
  if (path === '/api/v1/users/' || path === '/api/v1/users/{user_id}') return { first_name: 'Zed', last_name: null };
  if (path === '/api/v1/teams/' || path === '/api/v1/teams/{team_id}') return { name: 'Renamed' };
  if (path.endsWith('/authorize')) return { scopes: ['data:read'] };
  if (path === '/api/v1/teams/join') return { invitation: 'tds_inv_unknown' };
  if (path.endsWith('/invitations')) return {};
  if (path === '/api/v1/oauth/delegated-token') return { sub: '__A__' };
  if (path === '/api/v1/applications') return { name: 'App' };
  if (path.endsWith('/page')) return { slug: 'my-page' };
  return {};
}

function outcomeOf(status: number, body: unknown, expected: Outcome, ownerIds: string[]): Outcome {
  if (status === 401 || status === 403 || status === 404) return status;
  if (status === 429 || status >= 500) return status as Outcome;
  if (expected !== 'rows' && expected !== 'none') return 'ok';
  const text = JSON.stringify(body);
  const held = ownerIds.filter((id) => text.includes(id));
  return held.length ? 'rows' : 'none';
}

test('every operation of the OpenAPI document has a row in the matrix, and every row an operation', async (t) => {
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`));
  t.deepEqual(
    documented.filter((op) => !(op in OPERATIONS)),
    [],
    'operations without a row',
  );
  t.deepEqual(
    Object.keys(OPERATIONS).filter((op) => !documented.includes(op)),
    [],
    'rows of no operation',
  );
});

test('every operation × every caller answers exactly as the matrix says', async (t) => {
  const setup = await setUp();
  const athleteId = JSON.parse(Buffer.from(setup.tokens.owner.split('.')[1]!, 'base64url').toString()).sub as string;
  const mismatches: string[] = [];
  let calls = 0;
  for (const who of CALLERS) {
    for (const operation of Object.keys(OPERATIONS)) {
      const expected = expectedOutcome(operation, who);
      if (expected === undefined) continue;
      const ids = who === 'manager' ? setup.ids.managed : setup.ids.owner;
      const [method, template] = operation.split(' ') as [string, string];
      const values: Record<string, string> = { ...ids, ...setup.account, measure: 'body_mass' };
      let path = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name]!);
      if (operation === 'DELETE /api/v1/dailies/{measure}') path += `?date=${ids.date}`;
      if (operation === 'GET /api/v1/profile/intensity-duration-model') path += `?date=${ids.date}`;
      let body = bodyOf(operation, ids);
      if (operation === 'POST /api/v1/oauth/delegated-token') body = { sub: athleteId };
      const res = await api(service, setup.tokenOf(who), method, path, body);
      calls++;
      const ownerIds = [ids.activity_id, ids.trace_id, ids.test_id, ids.source_id];
      const got = outcomeOf(res.status, res.body, expected, ownerIds);
      if (got !== expected)
        mismatches.push(
          `${who} ${operation}: expected ${expected}, got ${got} (${res.status} ${String(JSON.stringify(res.body)).slice(0, 160)})`,
        );
      // What a destructive write removed is made again, so the next caller meets the same resources.
      if (
        res.status < 300 &&
        method === 'DELETE' &&
        /activities|traces|tests|dailies/.test(template) &&
        !template.endsWith('app-metadata')
      ) {
        const again = await resources(setup.tokenOf(who === 'manager' ? 'manager' : 'owner'), 2 + calls);
        Object.assign(who === 'manager' ? setup.ids.managed : setup.ids.owner, again);
      }
    }
  }
  t.deepEqual(mismatches, []);
  t.true(calls > 500, `${calls} calls`);
});
