/**
 * The channel columns behind `longitudinal-mean-max?after=…` as clients see them, across two API
 * processes sharing one DATA_DIR and database: every answer equals the curves computed here from
 * the sample files themselves (read with DuckDB, the kernel run on plain arrays), after uploads
 * (appended by the ingest job), uploads of older rides, deletions (answered by the other process),
 * a lost columns directory and concurrent fills from both processes (one record per activity); and
 * the same for the fatigue grid (engine/curves/after-grid.ts) that answers `after` values on it.
 */
import test from 'ava';
import type { ChildProcess } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import { freePort, startTestService, type TestService } from './helpers/service.ts';
import { startApiProcess } from './helpers/worker-process.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { DEFAULT_DURATIONS } from '../engine/curves/durations.ts';
import { AFTER_GRID_CHANNEL, afterGridEntry } from '../engine/curves/after-grid.ts';
import { longitudinalAfter } from '../engine/curves/longitudinal.ts';
import { readChannelInto } from '../engine/samples/sample-scan.ts';
import { RECORD_BYTES } from '../engine/samples/column-log.ts';
import { activitiesForScan } from '../db/activities.ts';
import { columnsDir } from '../lib/storage.ts';
import { sampleKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import type { User } from '../db/database.ts';

let service: TestService;
let other: { child: ChildProcess; url: string };
let user: User;
let token: string;

/**
 * Off the fatigue grid (100 kJ): from the samples of the rides the grid cannot rule out. On it
 * (multiples of 250 kJ, default durations): from the rides' grid entries alone.
 */
const AFTER = [0, 100, 250];
const GRID_AFTER = [0, 250, 500];
const START = '2024-01-01';
const END = '2024-12-31';

/** A ride in 2024: whole-watt power (float32 entries), speed with millimetres (float64 entries). */
function ride(day: number, seconds: number, seed: number): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: 3600,
    sessions: [
      {
        sport: 'cycling',
        start: new Date(Date.UTC(2024, 0, 1, 8) + day * 86_400_000),
        seconds,
        record: (i) => ({
          power: 120 + ((i * seed) % 230),
          heartRate: 130,
          cadence: 88,
          speed: 7 + ((i * seed) % 97) / 37,
          distance: i * 8,
        }),
      },
    ],
  });
}

async function startOther(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = await startApiProcess(service.config, {
    PORT: String(port),
    HOST: '127.0.0.1',
    CURVE_CACHE_SECONDS: '0',
    ENGINE_THREADS: '2',
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

test.before(async () => {
  service = await startTestService({ workers: true, env: { CURVE_CACHE_SECONDS: '0' } });
  other = await startOther();
  user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write']);
});

test.after.always(async () => {
  other?.child.kill('SIGKILL');
  await service?.close();
});

interface Curve {
  duration: number[];
  start: string[];
  power?: number[];
  speed?: number[];
  activity_id: string[];
  after: number[];
}

async function curve(base: string, metric: 'power' | 'speed', by: 'duration' | 'intensity', after = AFTER): Promise<Curve> {
  const res = await fetch(
    `${base}/api/v1/activities/longitudinal-mean-max?metric=${metric}&by=${by}&after=${after.join(',')}&start=${START}&end=${END}&format=json`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
  if (res.status !== 200) throw new Error(`${base}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Curve;
}

/** The curve computed from the sample files (DuckDB reads them; the kernel runs on plain arrays). */
async function expected(metric: 'power' | 'speed', by: 'duration' | 'intensity', after = AFTER) {
  const activities = await activitiesForScan(service.deps.db, user.id, { fromDay: START, toDay: END }, metric);
  const values = new Float64Array(activities.reduce((n, a) => n + a.samples, 0));
  await readChannelInto(
    service.deps.engine.samples,
    activities.map((a) => objectFile(service.config.DATA_DIR, sampleKey(user.id, a.id))),
    metric,
    values,
  );
  const from = new Int32Array(activities.length);
  activities.reduce((at, a, i) => ((from[i] = at), at + a.samples), 0);
  const longest = Math.max(...activities.map((a) => a.samples));
  const durations = by === 'duration' ? Int32Array.from(DEFAULT_DURATIONS.filter((d) => d <= longest)) : null;
  const thresholds = Float64Array.from(after, (x) => (metric === 'power' ? x * 1000 : x));
  const out = longitudinalAfter({
    samples: { values, from, length: Int32Array.from(activities, (a) => a.samples) },
    thresholds,
    durations,
    step: metric === 'power' ? 1 : 0.01,
  });
  return { activities: activities.map((a) => a.id), starts: activities.map((a) => a.start_time.getTime()), out, durations };
}

/** An instant as the JSON frames write it (whole seconds, `Z`). */
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Both processes' answers equal the computation from the sample files, value for value. */
async function agree(t: import('ava').ExecutionContext, label: string) {
  for (const after of [AFTER, GRID_AFTER]) {
    const want = await expected('power', 'duration', after);
    const rows: { value: number; owner: string; start: string }[] = [];
    if (want.out.kind !== 'duration') throw new Error('by duration');
    want.out.curves.forEach((c) =>
      c.best.forEach(
        (v, k) =>
          v === v &&
          rows.push({ value: v, owner: want.activities[c.owner[k]!]!, start: isoSeconds(want.starts[c.owner[k]!]! + c.start[k]! * 1000) }),
      ),
    );
    for (const base of [service.url, other.url]) {
      const got = await curve(base, 'power', 'duration', after);
      const where = `${label}: after=${after.join(',')} from ${base === service.url ? 'A' : 'B'}`;
      t.deepEqual(
        got.power,
        rows.map((r) => r.value),
        `${where}: power`,
      );
      t.deepEqual(
        got.activity_id,
        rows.map((r) => r.owner),
        `${where}: owners`,
      );
      t.deepEqual(
        got.start,
        rows.map((r) => r.start),
        `${where}: window starts`,
      );
    }
  }
  const speed = await expected('speed', 'intensity');
  if (speed.out.kind !== 'intensity') throw new Error('by intensity');
  const durations = speed.out.curves.flatMap((c) => Array.from(c.duration).filter((d) => d > 0));
  const [a, b] = await Promise.all([curve(service.url, 'speed', 'intensity'), curve(other.url, 'speed', 'intensity')]);
  t.deepEqual(a, b, `${label}: speed by intensity, A and B`);
  t.deepEqual(a.duration, durations, `${label}: speed levels' durations`);
}

const held = () => service.deps.engine.columns.held(user.id, 'power');

/**
 * The column once it holds every id: the ingest job appends after its commit, so a source reads
 * `processed` a moment before its ride is in the column (a request in between reads the sample file).
 */
async function heldOnce(channel: string, ids: string[]) {
  const until = Date.now() + 10_000;
  for (;;) {
    const column = await service.deps.engine.columns.held(user.id, channel);
    if (ids.every((id) => column.has(id)) || Date.now() > until) return column;
    await new Promise((r) => setTimeout(r, 20));
  }
}

test.serial('uploads: the ingest job appends each ride to the columns, and both processes answer from them', async (t) => {
  const rides = [ride(10, 1_800, 3), ride(40, 2_400, 5), ride(70, 1_200, 7), ride(100, 3_000, 11), ride(130, 900, 13)];
  const sources = await uploadAndWait(
    service,
    token,
    rides.map((bytes, i) => ({ name: `r${i}.fit`, bytes })),
  );
  const ids = sources.flatMap((s: { activity_ids: string[] }) => s.activity_ids);
  t.is(ids.length, 5);
  const column = await heldOnce('power', ids);
  t.deepEqual([...column.keys()].sort(), [...ids].sort(), 'appended by the ingest job, before any request');
  t.is((await service.deps.engine.columns.held(user.id, 'speed')).size, 0, 'speed only once asked for');
  for (const id of ids) {
    const want = new Float64Array(column.get(id)!.values.length);
    await readChannelInto(service.deps.engine.samples, [objectFile(service.config.DATA_DIR, sampleKey(user.id, id))], 'power', want);
    t.deepEqual(Array.from(column.get(id)!.values), Array.from(want), `the column holds ${id}'s samples`);
  }
  const grid = await heldOnce(AFTER_GRID_CHANNEL, ids);
  t.deepEqual([...grid.keys()].sort(), [...ids].sort(), 'the fatigue grid appended by the ingest job too');
  for (const id of ids)
    t.deepEqual(Array.from(grid.get(id)!.values), Array.from(afterGridEntry(column.get(id)!.values)), `the grid holds ${id}'s entry`);
  t.true(
    [...grid.values()].some((e) => e.values[0]! >= 3),
    'a ride reaches 500 kJ',
  );
  await agree(t, 'five rides');
  t.is((await service.deps.engine.columns.held(user.id, 'speed')).size, 5, 'the speed request filled its column');
});

test.serial('an older ride uploaded late, and a deletion answered by the other process', async (t) => {
  const [late] = await uploadAndWait(service, token, [{ name: 'late.fit', bytes: ride(5, 1_500, 17) }]);
  t.true((await heldOnce('power', late.activity_ids)).has(late.activity_ids[0]));
  t.true((await heldOnce('speed', late.activity_ids)).has(late.activity_ids[0]), 'a started speed column is appended by ingestion too');
  await agree(t, 'a late ride');

  const victim = [...(await held()).keys()].find((id) => id !== late.activity_ids[0])!;
  const dir = columnsDir(service.config.DATA_DIR, user.id);
  const gen = (await readFile(`${dir}/power.current`, 'utf8')).trim();
  const log = await readFile(`${dir}/power.${gen}.log`);
  const res = await fetch(`${other.url}/api/v1/activities/${victim}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
  t.is(res.status, 204);
  t.false((await held()).has(victim), 'a tombstone');
  t.false((await service.deps.engine.columns.held(user.id, AFTER_GRID_CHANNEL)).has(victim), 'a tombstone in the grid column');
  t.is((await stat(`${dir}/power.${gen}.log`)).size, log.length + RECORD_BYTES, 'one record: the tombstone');
  await agree(t, 'after a deletion');
});

test.serial(
  'a lost columns directory is rebuilt from the sample files by concurrent requests to both processes, each activity once',
  async (t) => {
    const dir = columnsDir(service.config.DATA_DIR, user.id);
    const count = (await held()).size;
    await rm(dir, { recursive: true, force: true });
    const answers = await Promise.all(
      [service.url, other.url, service.url, other.url, other.url, service.url].map((base) => curve(base, 'power', 'duration')),
    );
    for (const a of answers.slice(1)) t.deepEqual(a, answers[0]);
    t.is((await stat(`${dir}/power.1.log`)).size, count * RECORD_BYTES, 'one record per activity: the fills took turns');
    t.is(
      (await stat(`${dir}/${AFTER_GRID_CHANNEL}.1.log`)).size,
      count * RECORD_BYTES,
      'the grid (which rules out rides off its points) rebuilt from the power column, one record per activity',
    );
    const grid = await Promise.all(
      [service.url, other.url, other.url, service.url].map((base) => curve(base, 'power', 'duration', GRID_AFTER)),
    );
    for (const a of grid.slice(1)) t.deepEqual(a, grid[0]);
    t.is((await stat(`${dir}/${AFTER_GRID_CHANNEL}.1.log`)).size, count * RECORD_BYTES, 'requests on the grid read it as it was');
    t.is((await stat(`${dir}/power.1.log`)).size, count * RECORD_BYTES, 'and the power column too');
    await agree(t, 'rebuilt');
  },
);

test.serial('the other process after a request for a range without activities, and another user', async (t) => {
  const res = await fetch(
    `${other.url}/api/v1/activities/longitudinal-mean-max?metric=power&after=0&start=2020-01-01&end=2020-12-31&format=json`,
    { headers: { authorization: `Bearer ${token}` } },
  );
  t.is(res.status, 200);
  t.deepEqual(((await res.json()) as Curve).power, []);
  const stranger = await createTestUser(service);
  const theirs = await api(
    service,
    await tokenFor(service, stranger, ['data:read']),
    'GET',
    `/api/v1/activities/longitudinal-mean-max?metric=power&after=0&start=${START}&end=${END}&format=json`,
  );
  t.is(theirs.status, 200);
  t.deepEqual(theirs.body.power, [], 'another user sees none of them');
});
