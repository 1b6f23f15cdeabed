/**
 * The OpenAPI document against the routes: for every operation and query parameter it declares,
 * what the route accepts must match the declared type and default. Generated from /openapi.json,
 * not from a hand-written list:
 * - a declared default sent explicitly is answered exactly as the parameter left out (and, for
 *   booleans and enums, another value is answered differently, so the comparison can tell);
 * - a boolean takes `true`, `false`, `1`, `0`, and anything else is a 422 naming it;
 * - an integer refuses a fraction, a word and values past its bounds; an enum (or an array of enum
 *   items) a value outside it; a `format: date` something that is not a date; a required parameter
 *   its absence — each a 422 naming the parameter.
 */
import test from 'ava';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';

/** The authorization endpoint validates its own query and answers RFC 6749 errors by redirect, not 422. */
const RFC6749_QUERY = new Set(['get /oauth/authorize']);

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: {
    type?: string;
    enum?: string[];
    default?: unknown;
    format?: string;
    minimum?: number;
    maximum?: number;
    items?: { enum?: string[]; pattern?: string };
  };
}
interface Operation {
  method: string;
  path: string;
  parameters: Parameter[];
}

let service: TestService;
let token: string;
let operations: Operation[];
const pathValues: Record<string, string> = { measure: 'body_mass' };

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

test.before(async () => {
  service = await startTestService({ workers: true });
  const user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write', 'profile']);
  // 20 minutes of varied power, speed and heart rate two days ago: segmentation, the metric and the
  // duration grid all change the answers.
  const start = Date.now() - 2 * DAY_MS;
  const rows = Array.from({ length: 1200 }, (_, i) => {
    const power = Math.round(220 + 60 * Math.sin(i / 9) + ((i * 7919) % 23));
    const speed = (8 + 2 * Math.sin(i / 13) + ((i * 104729) % 17) / 40).toFixed(2);
    return `${new Date(start + i * 1000).toISOString()},${power},${speed},${120 + (i % 40)}`;
  });
  const csv = new TextEncoder().encode(`timestamp,power,speed,heart_rate\n${rows.join('\n')}\n`);
  const [source] = await uploadAndWait(service, token, [{ name: 'ride.csv', bytes: csv }], { sport: 'cycling.road', tags: 'intervals' });
  if (source.status !== 'processed') throw new Error(JSON.stringify(source));
  pathValues.activity_id = source.activity_ids[0];
  const lab = await api(service, token, 'POST', '/api/v1/tests/', { sport: 'cycling', start: new Date(start).toISOString() });
  if (lab.status !== 201) throw new Error(JSON.stringify(lab.body));
  pathValues.test_id = lab.body.id;
  // A trace in the test's window that names no test: `traces=auto` lists it, `traces=linked` does not.
  await api(service, token, 'POST', '/api/v1/traces/', { timestamp: new Date(start + 60_000).toISOString(), lactate: 1.2 });
  for (const [daysAgo, value] of [
    [10, 71.2],
    [4, 70.1],
  ] as const) {
    const res = await api(service, token, 'POST', '/api/v1/dailies/body_mass', { date: dayOf(Date.now() - daysAgo * DAY_MS), value });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  }
  // A managed user, a team and an athlete sharing with it: `include_managed` and `include_shared` change the list.
  const managed = await api(service, token, 'POST', '/api/v1/users/', { first_name: 'Bob', last_name: null });
  pathValues.user_id = managed.body.id;
  const team = await api(service, token, 'POST', '/api/v1/teams/', { name: 'Team' });
  pathValues.team_id = team.body.id;
  pathValues.invitation_id = (await api(service, token, 'POST', `/api/v1/teams/${team.body.id}/invitations`, {})).body.id;
  const athlete = await createTestUser(service, { first_name: 'Anna' });
  await api(service, await tokenFor(service, athlete, ['data:write']), 'POST', `/api/v1/teams/${team.body.id}/authorize`, {
    scopes: ['data:read'],
  });
  const doc = (await (await fetch(`${service.url}/openapi.json`)).json()) as any;
  operations = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item).map(([method, op]) => ({ method, path, parameters: (op.parameters ?? []) as Parameter[] })),
  );
});
test.after.always(() => service?.close());

function url(op: Operation, query: [string, string][]): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!pathValues[name]) throw new Error(`no value for path parameter ${name} of ${op.path}`);
    return pathValues[name]!;
  });
  return `${service.url}${path}${query.length ? `?${new URLSearchParams(query)}` : ''}`;
}

async function call(op: Operation, query: [string, string][]) {
  const res = await fetch(url(op, query), { method: op.method.toUpperCase(), headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

/** The query a request needs besides the parameter under test: every other required parameter, at a valid value. */
function requiredOthers(op: Operation, except: string): [string, string][] {
  return op.parameters
    .filter((p) => p.in === 'query' && p.required && p.name !== except)
    .map((p) => {
      if (p.schema.format === 'date') return [p.name, dayOf(Date.now())];
      throw new Error(`no valid value known for required ${p.name} of ${op.method} ${op.path}`);
    });
}

/** The parameter's default as it goes in a query string. */
function wire(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Values outside the declared type: each must be a 422 naming the parameter. */
function invalidValues(schema: Parameter['schema']): string[] {
  const bad: string[] = [];
  if (schema.type === 'boolean') bad.push('yes', 'TRUE', '2', '');
  if (schema.type === 'integer') {
    bad.push('1.5', 'ten');
    if (schema.minimum !== undefined) bad.push(String(schema.minimum - 1));
    if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER) bad.push(String(schema.maximum + 1));
  }
  if (schema.enum) bad.push('not-a-value');
  if (schema.items?.enum) bad.push('not-a-value');
  if (schema.items?.pattern) bad.push('not a number');
  if (schema.format === 'date') bad.push('2026-02-30', 'yesterday');
  return bad;
}

function names(body: Buffer, name: string): boolean {
  const detail = JSON.parse(body.toString()).detail as { loc: unknown[] }[];
  return Array.isArray(detail) && detail.some((d) => d.loc[0] === 'query' && d.loc[1] === name);
}

test('the document declares query parameters to check, of every kind', (t) => {
  const query = operations.flatMap((op) => op.parameters.filter((p) => p.in === 'query'));
  const kinds = new Set(query.map((p) => (p.schema.enum ? 'enum' : p.schema.type)));
  for (const kind of ['boolean', 'integer', 'enum', 'array', 'string']) t.true(kinds.has(kind), kind);
  t.true(query.filter((p) => p.schema.default !== undefined).length >= 15);
  t.deepEqual(
    operations
      .filter((op) => op.parameters.some((p) => p.in === 'query') && RFC6749_QUERY.has(`${op.method} ${op.path}`))
      .map((op) => op.path),
    ['/oauth/authorize'],
  );
});

test('a declared default sent explicitly is answered as the parameter left out', async (t) => {
  let checked = 0;
  for (const op of operations) {
    if (op.method !== 'get' || RFC6749_QUERY.has(`${op.method} ${op.path}`)) continue;
    for (const p of op.parameters) {
      if (p.in !== 'query' || p.schema.default === undefined) continue;
      const base = requiredOthers(op, p.name);
      const omitted = await call(op, base);
      const explicit = await call(op, [...base, [p.name, wire(p.schema.default)]]);
      const where = `${op.path} ${p.name}=${wire(p.schema.default)}`;
      t.is(omitted.status, 200, where);
      t.is(explicit.status, omitted.status, where);
      t.true(explicit.body.equals(omitted.body), `${where}: the answers differ`);
      // Another value of a boolean or an enum changes the answer: the comparison above can tell.
      const other = p.schema.type === 'boolean' ? String(!p.schema.default) : p.schema.enum?.find((v) => v !== p.schema.default);
      if (other !== undefined) {
        const changed = await call(op, [...base, [p.name, other]]);
        t.false(changed.status === 200 && changed.body.equals(omitted.body), `${op.path} ${p.name}=${other} is answered as the default`);
      }
      checked++;
    }
  }
  t.true(checked >= 15, `${checked} defaults`);
});

test('a boolean parameter takes true, false, 1 and 0, and True and False (python requests)', async (t) => {
  let checked = 0;
  for (const op of operations) {
    if (op.method !== 'get') continue;
    for (const p of op.parameters) {
      if (p.in !== 'query' || p.schema.type !== 'boolean') continue;
      const base = requiredOthers(op, p.name);
      const values = ['true', 'false', '1', '0', 'True', 'False'];
      const answers = await Promise.all(values.map((v) => call(op, [...base, [p.name, v]])));
      for (const [i, v] of values.entries()) t.is(answers[i]!.status, 200, `${op.path} ${p.name}=${v}`);
      t.true(answers[0]!.body.equals(answers[2]!.body), `${op.path} ${p.name}: 1 is true`);
      t.true(answers[1]!.body.equals(answers[3]!.body), `${op.path} ${p.name}: 0 is false`);
      t.true(answers[0]!.body.equals(answers[4]!.body), `${op.path} ${p.name}: True is true`);
      t.true(answers[1]!.body.equals(answers[5]!.body), `${op.path} ${p.name}: False is false`);
      checked++;
    }
  }
  t.is(checked, 6, 'segmentation, only_root, interpolate, include_baseline, include_managed, include_shared');
});

test('a value outside the declared type is a 422 naming the parameter; so is a missing required one', async (t) => {
  let checked = 0;
  for (const op of operations) {
    if (RFC6749_QUERY.has(`${op.method} ${op.path}`)) continue;
    for (const p of op.parameters) {
      if (p.in !== 'query') continue;
      const base = requiredOthers(op, p.name);
      for (const value of invalidValues(p.schema)) {
        const res = await call(op, [...base, [p.name, value]]);
        t.is(res.status, 422, `${op.method} ${op.path} ${p.name}=${value}`);
        if (res.status === 422) t.true(names(res.body, p.name), `${op.path} ${p.name}=${value}: ${res.body}`);
        checked++;
      }
      if (p.required) {
        const res = await call(op, base);
        t.is(res.status, 422, `${op.method} ${op.path} without ${p.name}`);
        t.true(names(res.body, p.name));
        checked++;
      }
    }
  }
  t.true(checked >= 40, `${checked} requests`);
});
