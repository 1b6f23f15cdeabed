import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import type { User } from '../db/database.ts';

const csv = (text: string) => new TextEncoder().encode(text);

/** A short CSV activity starting at `stamp` (ISO with offset). */
function session(stamp: string, seconds = 3) {
  const start = Date.parse(stamp);
  const offset = stamp.match(/(Z|[+-]\d{2}:\d{2})$/)![1]!;
  const lines = Array.from({ length: seconds }, (_, i) => {
    const local = new Date(
      start +
        i * 1000 +
        (offset === 'Z'
          ? 0
          : (offset.startsWith('-') ? -1 : 1) * (Number(offset.slice(1, 3)) * 3600 + Number(offset.slice(4)) * 60) * 1000),
    );
    return `${local.toISOString().slice(0, 19)}${offset},${200 + i}`;
  });
  return csv(`timestamp,power\n${lines.join('\n')}\n`);
}

let service: TestService;
let user: User;
let token: string;
const ids: Record<string, string> = {};

test.before(async () => {
  service = await startTestService({ workers: true });
  user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write']);
  const plan: [string, string, string, string[]][] = [
    ['road', '2026-03-01T08:00:00Z', 'cycling.road', ['race']],
    ['trainer', '2026-03-02T18:00:00Z', 'cycling.trainer', []],
    ['run', '2026-03-03T07:00:00+02:00', 'running.trail', ['race', 'hills']],
    ['late', '2026-03-04T23:30:00-05:00', 'running', []],
    ['row', '2026-03-05T09:00:00Z', 'rowing+stationary', ['erg']],
  ];
  for (const [name, stamp, sport, tags] of plan) {
    const [source] = await uploadAndWait(service, token, [{ name: `${name}.csv`, bytes: session(stamp) }], {
      sport,
      ...(tags.length ? { tags } : {}),
    });
    if (source.status !== 'processed') throw new Error(JSON.stringify(source));
    ids[name] = source.activity_ids[0];
  }
});
test.after.always(() => service?.close());

const list = async (query = '') => api(service, token, 'GET', `/api/v1/activities/${query}`);
const names = (body: { id: string }[]) => body.map((a) => Object.entries(ids).find(([, id]) => id === a.id)?.[0]);

test('the list is newest first with summaries and no laps; limit and offset page through it', async (t) => {
  const all = await list();
  t.is(all.status, 200);
  t.deepEqual(names(all.body), ['row', 'late', 'run', 'trainer', 'road']);
  t.like(all.body[0], { sport: 'rowing+stationary', laps: null, traces: [], app_metadata: null, tags: ['erg'], metrics: ['power'] });
  t.deepEqual(all.body[0].summary, { power: { max: 202, mean: 201, work: 0.603 } });
  t.deepEqual(names((await list('?limit=2')).body), ['row', 'late']);
  t.deepEqual(names((await list('?limit=2&offset=2')).body), ['run', 'trainer']);
  t.deepEqual((await list('?offset=10')).body, []);
  for (const bad of ['?limit=0', '?limit=1001', '?offset=-1', '?limit=abc']) {
    const res = await list(bad);
    t.is(res.status, 422, bad);
    t.is(res.body.detail[0].loc[0], 'query');
  }
});

test('sport filters match sub-sports and normalise legacy names; repeated keys, commas and the deprecated `sports` all work', async (t) => {
  t.deepEqual(names((await list('?sport=cycling')).body), ['trainer', 'road']);
  t.deepEqual(names((await list('?sport=cycling%2Bstationary')).body), ['trainer']);
  t.deepEqual(names((await list('?sport=cycling.trainer')).body), ['trainer'], 'legacy name normalised');
  t.deepEqual(names((await list('?sport=running&sport=rowing')).body), ['row', 'late', 'run']);
  t.deepEqual(names((await list('?sport=running,rowing')).body), ['row', 'late', 'run']);
  t.deepEqual(names((await list('?sports=running.trail')).body), ['run']);
  t.deepEqual((await list('?sport=swimming')).body, []);
  const bad = await list('?sport=Not%20A%20Sport');
  t.is(bad.status, 422);
  t.deepEqual(bad.body.detail[0].loc, ['query', 'sport', 0]);
});

test('tags match any of the given tags', async (t) => {
  t.deepEqual(names((await list('?tags=race')).body), ['run', 'road']);
  t.deepEqual(names((await list('?tags=hills&tags=erg')).body), ['row', 'run']);
  t.deepEqual((await list('?tags=nothing')).body, []);
});

test('start/end: dates are whole local days, inclusive; instants compare the UTC start; naive times are refused', async (t) => {
  t.deepEqual(names((await list('?start=2026-03-02&end=2026-03-03')).body), ['run', 'trainer']);
  // 23:30 at UTC−5 on the 4th is 04:30Z on the 5th: by its local day it is on the 4th.
  t.deepEqual(names((await list('?start=2026-03-04&end=2026-03-04')).body), ['late']);
  t.deepEqual(names((await list('?start=2026-03-05T00:00:00Z')).body), ['row', 'late']);
  t.deepEqual(names((await list('?end=2026-03-01T08:00:00Z')).body), ['road'], 'an instant end is inclusive');
  // 07:00+02:00 is 05:00Z.
  t.deepEqual(names((await list('?start=2026-03-03T05:00:00Z&end=2026-03-03T05:00:00Z')).body), ['run']);
  for (const bad of ['?start=2026-03-04T10:00:00', '?end=yesterday', '?start=2026-02-30']) {
    const res = await list(bad);
    t.is(res.status, 422, bad);
  }
});

test('latest: the newest activity (optionally of a sport) as ActivityDetails, JSON null when there is none', async (t) => {
  const latest = await api(service, token, 'GET', '/api/v1/activities/latest');
  t.is(latest.status, 200);
  t.is(latest.body.id, ids.row);
  t.true(Array.isArray(latest.body.laps));
  t.true('distance' in latest.body && 'devices' in latest.body);
  t.is((await api(service, token, 'GET', '/api/v1/activities/latest?sport=cycling')).body.id, ids.trainer);
  const none = await fetch(`${service.url}/api/v1/activities/latest?sport=swimming`, { headers: { authorization: `Bearer ${token}` } });
  t.is(none.status, 200);
  t.regex(none.headers.get('content-type') ?? '', /application\/json/);
  t.is(await none.text(), 'null');
});

test('details: local times from the recorded offset, laps with statistics, distance and devices', async (t) => {
  const res = await api(service, token, 'GET', `/api/v1/activities/${ids.run}`);
  t.is(res.status, 200);
  t.like(res.body, {
    id: ids.run,
    sport: 'running.trail',
    start: '2026-03-03T05:00:00Z',
    end: '2026-03-03T05:00:03Z',
    start_local: '2026-03-03T07:00:00',
    end_local: '2026-03-03T07:00:03',
    duration: 'PT3S',
    distance: null,
    devices: [],
    tags: ['race', 'hills'],
  });
  t.deepEqual(res.body.laps, [
    {
      start: '2026-03-03T05:00:00Z',
      end: '2026-03-03T05:00:03Z',
      start_local: '2026-03-03T07:00:00',
      end_local: '2026-03-03T07:00:03',
      duration: 'PT3S',
      timer_duration: 'PT3S',
      moving_duration: 'PT3S',
      power: { max: 202, mean: 201, work: 0.603 },
    },
  ]);
  // Fields of our own (additive): timer and moving time, the file's own values (none for CSV), dropped records, the rules' version.
  t.like(res.body, { timer_duration: 'PT3S', moving_duration: 'PT3S', device_summary: null, dropped_records: {}, ingest_version: 2 });

  const fit = readFileSync(join(fixturesDir(), 'fit', 'Karoo-Botley_BW_Swanmore_Wickham-2025-05-09-1238.fit'));
  const [source] = await uploadAndWait(service, token, [{ name: 'karoo.fit', bytes: fit }]);
  const ride = (await api(service, token, 'GET', `/api/v1/activities/${source.activity_ids[0]}`)).body;
  t.true(ride.distance > 1000);
  t.is(ride.distance, ride.summary.distance.sum);
  t.true(ride.devices.length > 0);
  t.true(ride.laps.every((l: Record<string, unknown>) => typeof l.duration === 'string' && 'start_local' in l));
  // The Karoo's session: its own values beside ours; ascent is the device's total.
  t.like(ride.device_summary, {
    total_timer_time: 4315,
    total_elapsed_time: 4358,
    avg_power: 174,
    normalized_power: 195,
    total_ascent: 351,
  });
  t.is(ride.summary.altitude.gain, 351);
  t.regex(ride.timer_duration, /^PT1H11M5[0-9](\.\d+)?S$/);
  t.true(Math.abs(ride.summary.power.normalized - 195) / 195 < 0.02, `NP ${ride.summary.power.normalized} within 2 % of the device's 195`);
  t.true(ride.summary.power.work > 700 && ride.summary.power.work < 800, `work ${ride.summary.power.work} kJ`);

  // Download: the original bytes, as an attachment.
  const download = await fetch(`${service.url}/api/v1/activities/${source.activity_ids[0]}/download`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.is(download.status, 200);
  t.is(download.headers.get('content-type'), 'application/vnd.ant.fit');
  t.regex(download.headers.get('content-disposition') ?? '', /^attachment; filename="karoo.fit"$/);
  t.deepEqual(Buffer.from(await download.arrayBuffer()), fit);
  const csvDownload = await fetch(`${service.url}/api/v1/activities/${ids.road}/download`, {
    headers: { authorization: `Bearer ${token}` },
  });
  t.regex(csvDownload.headers.get('content-type') ?? '', /^text\/csv/);
  t.regex(await csvDownload.text(), /^timestamp,power\n2026-03-01T08:00:00Z,200/);
});

test("another user's activity, an unknown id and a malformed id are 404 everywhere; reads need data:read", async (t) => {
  const other = await createTestUser(service);
  const otherToken = await tokenFor(service, other, ['data:read', 'data:write']);
  const app = await createTestApplication(service, other);
  const otherApp = await tokenFor(service, other, ['data:read', 'data:write'], app.id);
  for (const path of [`/api/v1/activities/${ids.road}`, `/api/v1/activities/${ids.road}/download`]) {
    t.is((await api(service, otherToken, 'GET', path)).status, 404, path);
  }
  t.is((await api(service, otherToken, 'DELETE', `/api/v1/activities/${ids.road}`)).status, 404);
  t.is((await api(service, otherApp, 'PUT', `/api/v1/activities/${ids.road}/app-metadata`, { a: 1 })).status, 404);
  t.is((await api(service, otherApp, 'DELETE', `/api/v1/activities/${ids.road}/app-metadata`)).status, 404);
  t.is((await api(service, token, 'GET', '/api/v1/activities/00000000-0000-4000-8000-000000000000')).status, 404);
  t.is((await api(service, token, 'GET', '/api/v1/activities/not-an-id')).status, 404);
  t.deepEqual((await api(service, otherToken, 'GET', '/api/v1/activities/')).body, [], "lists show only the caller's activities");
  t.is((await api(service, undefined, 'GET', '/api/v1/activities/')).status, 401);
  const writeOnly = await tokenFor(service, user, ['data:write']);
  t.is((await api(service, writeOnly, 'GET', '/api/v1/activities/')).status, 403);
  t.is((await api(service, writeOnly, 'GET', `/api/v1/activities/${ids.road}`)).status, 403);
  const readOnly = await tokenFor(service, user, ['data:read']);
  t.is((await api(service, readOnly, 'DELETE', `/api/v1/activities/${ids.road}`)).status, 403);
});

test('app metadata: an application sets, reads and deletes only its own; limits; first-party credentials get 403', async (t) => {
  const owner = await createTestUser(service);
  const appA = await createTestApplication(service, owner);
  const appB = await createTestApplication(service, owner);
  const a = await tokenFor(service, user, ['data:read', 'data:write'], appA.id);
  const b = await tokenFor(service, user, ['data:read', 'data:write'], appB.id);
  const path = `/api/v1/activities/${ids.trainer}/app-metadata`;

  const put = await api(service, a, 'PUT', path, { plan: 'base', zones: [1, 2, { deep: true }] });
  t.is(put.status, 200);
  t.deepEqual(put.body, { plan: 'base', zones: [1, 2, { deep: true }] });
  t.deepEqual((await api(service, a, 'GET', `/api/v1/activities/${ids.trainer}`)).body.app_metadata, {
    plan: 'base',
    zones: [1, 2, { deep: true }],
  });
  t.is((await api(service, b, 'GET', `/api/v1/activities/${ids.trainer}`)).body.app_metadata, null, "B does not see A's object");
  t.is((await api(service, token, 'GET', `/api/v1/activities/${ids.trainer}`)).body.app_metadata, null);
  const listed = (await api(service, a, 'GET', '/api/v1/activities/?sport=cycling')).body;
  t.deepEqual(listed.find((x: { id: string }) => x.id === ids.trainer).app_metadata, { plan: 'base', zones: [1, 2, { deep: true }] });

  t.deepEqual((await api(service, a, 'PUT', path, { replaced: 1 })).body, { replaced: 1 }, 'PUT replaces');
  t.deepEqual((await api(service, a, 'GET', `/api/v1/activities/${ids.trainer}`)).body.app_metadata, { replaced: 1 });

  t.is((await api(service, a, 'PUT', path, { big: 'x'.repeat(1100) })).status, 413);
  let deep: unknown = 1;
  for (let i = 0; i < 33; i++) deep = { d: deep };
  const tooDeep = await api(service, a, 'PUT', path, deep);
  t.is(tooDeep.status, 422);
  t.deepEqual(tooDeep.body.detail[0].loc, ['body']);
  t.is((await api(service, a, 'PUT', path, [1, 2])).status, 422);
  t.is((await api(service, a, 'PUT', path, '"text"')).status, 422);
  t.is((await api(service, token, 'PUT', path, { x: 1 })).status, 403, 'a personal token is not an application');
  const readOnlyApp = await tokenFor(service, user, ['data:read'], appA.id);
  t.is((await api(service, readOnlyApp, 'PUT', path, { x: 1 })).status, 403);

  t.is((await api(service, a, 'DELETE', path)).status, 204);
  t.is((await api(service, a, 'GET', `/api/v1/activities/${ids.trainer}`)).body.app_metadata, null);
  t.is((await api(service, a, 'DELETE', path)).status, 204, 'deleting again is still 204');
});

test('DELETE removes the activity, its sample file, and its source and original once no activity is left', async (t) => {
  const fit = readFileSync(join(fixturesDir(), 'fit', '4078723797.fit'));
  const [source] = await uploadAndWait(service, token, [{ name: 'gone.fit', bytes: fit }]);
  const id = source.activity_ids[0];
  const samples = join(service.config.DATA_DIR, 'users', user.id, 'activities', `${id}.parquet`);
  const original = join(service.config.DATA_DIR, 'users', user.id, 'sources', `${source.id}.fit`);
  t.true(existsSync(samples) && existsSync(original));
  const res = await api(service, token, 'DELETE', `/api/v1/activities/${id}`);
  t.is(res.status, 204);
  t.is((await api(service, token, 'GET', `/api/v1/activities/${id}`)).status, 404);
  t.is((await api(service, token, 'GET', `/api/v1/sources/${source.id}`)).status, 404);
  t.false(existsSync(samples));
  t.false(existsSync(original));
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${id}`)).status, 404);
  // Uploading the file again makes it anew.
  const [again] = await uploadAndWait(service, token, [{ name: 'gone.fit', bytes: fit }]);
  t.is(again.status, 'processed');
  t.is(again.activity_ids.length, 1);
});
