/**
 * Per-activity curve and time-series endpoints as a client sees them: `/data`, `/mean-max` and
 * `/accumulated-work-duration`, in Parquet (read back with hyparquet, an independent reader) and in
 * JSON (`format=json`, `Accept: application/json`). Expectations are computed independently: the
 * 1 Hz grid from the ingest step run on the same bytes, mean-max from the plain reference
 * definition, AWD and segmentation checks from their definitions in docs/api-clients.md.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { uploadAndWait } from './helpers/activities.ts';
import {
  allGrid,
  DEFAULT_GRID,
  get,
  getFrame,
  ingested,
  isoLocal,
  isoZ,
  jsonOf,
  levelOf,
  nullable,
  plainAwd,
  plainMeanMax,
  zeroFilled,
  type FrameAnswer,
  type Kind,
} from './helpers/curves.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';

const fit = (name: string) => new Uint8Array(readFileSync(join(fixturesDir(), 'fit', name)));

/** A CSV activity with speed only: 300 s from 2024-02-10T09:00:00+01:00, speed 4.00 … 6.25 m/s. */
const SPEED_CSV = (() => {
  const start = Date.parse('2024-02-10T09:00:00+01:00');
  const lines = Array.from({ length: 300 }, (_, i) => `${isoLocal(start + i * 1000 + 3600_000)}+01:00,${(4 + (i % 10) * 0.25).toFixed(2)}`);
  return new TextEncoder().encode(`timestamp,speed\n${lines.join('\n')}\n`);
})();

interface Uploaded {
  id: string;
  grid: IngestedActivity;
}

let service: TestService;
let token: string;
let otherToken: string;
let writeOnly: string;
const a: Record<'ride' | 'tiny' | 'nopower' | 'run' | 'speedcsv', Uploaded> = {} as never;

test.before(async () => {
  service = await startTestService({ workers: true });
  const user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write']);
  writeOnly = await tokenFor(service, user, ['data:write']);
  const other = await createTestUser(service);
  otherToken = await tokenFor(service, other, ['data:read', 'data:write']);
  const plan: [keyof typeof a, string, Uint8Array, 'fit' | 'csv', string | null][] = [
    ['ride', 'ride.fit', fit('4078723797.fit'), 'fit', null],
    ['tiny', 'tiny.fit', fit('2020-06-01-16-52-40.fit'), 'fit', null],
    ['nopower', 'nopower.fit', fit('4801048867.fit'), 'fit', null],
    ['run', 'run.fit', fit('HRV-Data.fit'), 'fit', null],
    ['speedcsv', 'speed.csv', SPEED_CSV, 'csv', 'cycling'],
  ];
  await Promise.all(
    plan.map(async ([key, name, bytes, format, sport]) => {
      const [source] = await uploadAndWait(service, token, [{ name, bytes }], sport ? { sport } : {});
      if (source.status !== 'processed' || source.activity_ids.length !== 1) throw new Error(`${name}: ${JSON.stringify(source)}`);
      const [grid] = await ingested(bytes, format, sport);
      a[key] = { id: source.activity_ids[0], grid: grid! };
    }),
  );
});
test.after.always(() => service?.close());

const path = (key: keyof typeof a, what: string, query = '') => `/api/v1/activities/${a[key].id}/${what}${query ? `?${query}` : ''}`;

/** The frame has exactly these columns (names, order, Parquet types), and its JSON carries the same values (instants as …Z). */
function checkShape(t: ExecutionContext, answer: FrameAnswer, columns: [string, Kind][]) {
  t.deepEqual(
    answer.parquet.schema,
    columns.map(([name, kind]) => ({ name, kind })),
    'Parquet columns and types',
  );
  t.deepEqual(
    Object.keys(answer.json),
    columns.map(([name]) => name),
    'JSON columns',
  );
  t.deepEqual(answer.json, answer.parquet.columns as never, 'JSON values equal the Parquet values');
}

const timestamps = (g: IngestedActivity) => Array.from({ length: g.length }, (_, i) => isoZ(g.start + i * 1000));
const locals = (g: IngestedActivity) =>
  Array.from({ length: g.length }, (_, i) => isoLocal(g.start + i * 1000 + g.utcOffsetSeconds * 1000));
const channel = (g: IngestedActivity, name: string) => {
  const c = (g.channels as Record<string, Float64Array | undefined>)[name];
  return c ? nullable(c) : new Array<null>(g.length).fill(null);
};

// ---------------------------------------------------------------------------------------------
// /data

test('/data: default columns (timestamp, timestamp_local, duration, power, speed, heart_rate) hold the 1 Hz samples', async (t) => {
  for (const key of ['ride', 'tiny'] as const) {
    const g = a[key].grid;
    const answer = await getFrame(service, token, path(key, 'data'));
    checkShape(t, answer, [
      ['timestamp', 'timestamptz'],
      ['timestamp_local', 'timestamp'],
      ['duration', 'int32'],
      ['power', 'double'],
      ['speed', 'double'],
      ['heart_rate', 'double'],
    ]);
    const c = answer.parquet.columns;
    t.is(answer.parquet.rows, g.length, key);
    t.deepEqual(c.timestamp, timestamps(g), `${key}: one row per second from the start`);
    t.deepEqual(c.timestamp_local, locals(g), `${key}: local = UTC + the recorded offset`);
    t.is(g.utcOffsetSeconds, 7200, 'the fixtures were recorded at UTC+2');
    t.true(
      c.duration!.every((d) => d === 1),
      `${key}: duration 1 at 1 Hz`,
    );
    t.deepEqual(c.power, channel(g, 'power'), `${key}: power`);
    t.deepEqual(c.speed, channel(g, 'speed'), `${key}: speed`);
    t.deepEqual(c.heart_rate, channel(g, 'heart_rate'), `${key}: heart_rate`);
  }
  t.true(a.tiny.grid.channels.power!.some(Number.isNaN), 'the tiny ride has gaps in power');
  t.true((await getFrame(service, token, path('tiny', 'data'))).json.power!.includes(null), 'gaps are null in JSON');
});

test('/data: metrics in the order asked (commas or repeated keys); a channel the activity lacks is a column of nulls', async (t) => {
  const g = a.ride.grid;
  const answer = await getFrame(service, token, path('ride', 'data', 'metrics=heart_rate,smo2,duration&metrics=power'));
  checkShape(t, answer, [
    ['timestamp', 'timestamptz'],
    ['timestamp_local', 'timestamp'],
    ['heart_rate', 'double'],
    ['smo2', 'double'],
    ['duration', 'int32'],
    ['power', 'double'],
  ]);
  t.deepEqual(answer.parquet.columns.heart_rate, channel(g, 'heart_rate'));
  t.true(answer.parquet.columns.smo2!.every((v) => v === null));
  t.is(answer.parquet.columns.smo2!.length, g.length);
  t.deepEqual(answer.parquet.columns.power, channel(g, 'power'));

  const cadence = await getFrame(service, token, path('ride', 'data', 'metrics=cadence'));
  checkShape(t, cadence, [
    ['timestamp', 'timestamptz'],
    ['timestamp_local', 'timestamp'],
    ['cadence', 'double'],
  ]);
  t.deepEqual(cadence.parquet.columns.cadence, channel(g, 'cadence'));
});

/** Segments against the samples: contiguous rows covering the activity, every sample within `tolerance` of its segment's value. */
function checkSegments(t: ExecutionContext, answer: FrameAnswer, g: IngestedActivity, on: 'power' | 'speed', tolerance: number) {
  const c = answer.parquet.columns;
  const ms = answer.parquet.ms.timestamp as number[];
  const durations = c.duration as number[];
  const values = c[on] as (number | null)[];
  t.true(durations.length < g.length, 'fewer rows than samples');
  t.is(
    durations.reduce((s, d) => s + d, 0),
    g.length,
    'segment durations sum to the activity length',
  );
  t.is(ms[0], g.start);
  let at = 0;
  let bad = 0;
  for (let r = 0; r < durations.length; r++) {
    if (r > 0 && !(ms[r]! > ms[r - 1]!)) bad++;
    if (ms[r] !== g.start + at * 1000) bad++;
    t.true(durations[r]! >= 1);
    t.is(c.timestamp_local![r], isoLocal(ms[r]! + g.utcOffsetSeconds * 1000));
    for (let i = at; i < at + durations[r]!; i++) {
      const x = g.channels[on]![i]!;
      if (Number.isNaN(x) ? values[r] !== null : values[r] === null || Math.abs(x - values[r]!) > tolerance + 1e-9) bad++;
    }
    at += durations[r]!;
  }
  t.is(bad, 0, 'timestamps strictly increasing and contiguous; every sample within the tolerance of its segment');
  // The mean-max of the served series (each segment repeated `duration` times) is within the tolerance of the exact one.
  const expanded = zeroFilled(durations.flatMap((d, r) => new Array<number>(d).fill(values[r] ?? Number.NaN)));
  const grid = [1, 5, 30, 60, 300, 1200, 3600].filter((d) => d <= g.length);
  const exact = plainMeanMax(zeroFilled(g.channels[on]!), grid).best;
  const approx = plainMeanMax(expanded, grid).best;
  grid.forEach((d, k) =>
    t.true(Math.abs(exact[k]! - approx[k]!) <= tolerance + 1e-9, `mean-max at ${d} s: ${approx[k]} vs exact ${exact[k]}`),
  );
}

test('/data segmentation_on=power: rows are segments (duration = length), within 5 W, mean-max within 5 W; other channels are segment means', async (t) => {
  for (const key of ['ride', 'tiny'] as const) {
    const g = a[key].grid;
    const answer = await getFrame(service, token, path(key, 'data', 'segmentation_on=power'));
    checkShape(t, answer, [
      ['timestamp', 'timestamptz'],
      ['timestamp_local', 'timestamp'],
      ['duration', 'int32'],
      ['power', 'double'],
      ['speed', 'double'],
      ['heart_rate', 'double'],
    ]);
    checkSegments(t, answer, g, 'power', 5);
    // heart_rate of a segment: the mean of its non-missing samples.
    const c = answer.parquet.columns;
    let at = 0;
    let off = 0;
    (c.duration as number[]).forEach((d, r) => {
      const xs = Array.from(g.channels.heart_rate!.subarray(at, at + d)).filter((x) => !Number.isNaN(x));
      const mean = xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
      const got = c.heart_rate![r] as number | null;
      if (mean === null ? got !== null : got === null || Math.abs(got - mean) > 1e-9) off++;
      at += d;
    });
    t.is(off, 0, `${key}: heart_rate is the segment mean`);
  }
});

test('/data segmentation_on=speed: within 0.05 m/s', async (t) => {
  const answer = await getFrame(service, token, path('nopower', 'data', 'segmentation_on=speed&metrics=duration,speed'));
  checkShape(t, answer, [
    ['timestamp', 'timestamptz'],
    ['timestamp_local', 'timestamp'],
    ['duration', 'int32'],
    ['speed', 'double'],
  ]);
  checkSegments(t, answer, a.nopower.grid, 'speed', 0.05);
});

test('/data: 422 for segmentation on a channel the activity lacks, an unknown metric or segmentation channel', async (t) => {
  const noPower = await get(service, token, path('nopower', 'data', 'segmentation_on=power'));
  t.is(noPower.status, 422);
  t.deepEqual(
    jsonOf(noPower).detail.map((d: { loc: unknown[] }) => d.loc),
    [['query', 'segmentation_on']],
  );
  for (const [query, param] of [
    ['metrics=watts', 'metrics'],
    ['metrics=power,bogus', 'metrics'],
    ['segmentation_on=cadence', 'segmentation_on'],
    ['format=xml', 'format'],
  ] as const) {
    const res = await get(service, token, path('ride', 'data', query));
    t.is(res.status, 422, query);
    const detail = jsonOf(res).detail;
    t.true(Array.isArray(detail) && detail.length > 0, query);
    t.deepEqual(detail[0].loc.slice(0, 2), ['query', param], query);
  }
});

// ---------------------------------------------------------------------------------------------
// /mean-max

/** Expected mean-max rows from the plain definition on the zero-filled channel. */
function expectedMeanMax(g: IngestedActivity, metric: 'power' | 'speed', durations: number[]) {
  const { best, start } = plainMeanMax(zeroFilled(g.channels[metric]!), durations);
  return { duration: durations, [metric]: Array.from(best), start: Array.from(start, (i) => isoZ(g.start + i * 1000)) };
}

const MEAN_MAX_SHAPE = (metric: string): [string, Kind][] => [
  ['duration', 'int32'],
  [metric, 'double'],
  ['start', 'timestamptz'],
];

test('/mean-max: default durations (longer than the activity left out), values and starts identical to the plain mean-max', async (t) => {
  for (const key of ['ride', 'tiny'] as const) {
    const g = a[key].grid;
    const answer = await getFrame(service, token, path(key, 'mean-max'));
    checkShape(t, answer, MEAN_MAX_SHAPE('power'));
    const durations = DEFAULT_GRID.filter((d) => d <= g.length);
    t.deepEqual(answer.parquet.columns, expectedMeanMax(g, 'power', durations), key);
  }
  t.deepEqual((await getFrame(service, token, path('tiny', 'mean-max'))).parquet.columns.duration, [1, 2, 5, 10, 15, 20, 30, 60, 120]);
  t.is((await getFrame(service, token, path('ride', 'mean-max'))).parquet.columns.duration!.at(-1), 7200);
});

test('/mean-max: durations=5,60,300 and durations=all', async (t) => {
  const g = a.ride.grid;
  const some = await getFrame(service, token, path('ride', 'mean-max', 'durations=300,5,60'));
  checkShape(t, some, MEAN_MAX_SHAPE('power'));
  t.deepEqual(some.parquet.columns, expectedMeanMax(g, 'power', [5, 60, 300]));

  const all = await getFrame(service, token, path('ride', 'mean-max', 'durations=all'));
  const grid = allGrid(g.length);
  t.deepEqual(all.parquet.columns.duration, grid);
  t.deepEqual(grid.slice(178, 183), [179, 180, 185, 190, 195]);
  t.deepEqual(all.parquet.columns, expectedMeanMax(g, 'power', grid));

  // Asked durations longer than the activity are left out as well.
  const tiny = await getFrame(service, token, path('tiny', 'mean-max', 'durations=5,60,300,100000'));
  t.deepEqual(tiny.parquet.columns, expectedMeanMax(a.tiny.grid, 'power', [5, 60]));
});

/** Speed (decimal) curves: values equal up to float rounding, and each `start` is a window whose mean is the best. */
function checkSpeedCurve(t: ExecutionContext, answer: FrameAnswer, g: IngestedActivity, durations: number[]) {
  const c = answer.parquet.columns;
  t.deepEqual(c.duration, durations);
  const x = zeroFilled(g.channels.speed!);
  const { best } = plainMeanMax(x, durations);
  let bad = 0;
  durations.forEach((d, k) => {
    const got = c.speed![k] as number;
    if (Math.abs(got - best[k]!) > 1e-9 * Math.max(1, best[k]!)) bad++;
    const i = ((answer.parquet.ms.start![k] as number) - g.start) / 1000;
    let sum = 0;
    for (let j = i; j < i + d; j++) sum += x[j]!;
    if (!(Number.isInteger(i) && i >= 0 && i + d <= x.length) || Math.abs(sum / d - best[k]!) > 1e-9 * Math.max(1, best[k]!)) bad++;
  });
  t.is(bad, 0, 'speed values and windows match the plain mean-max');
}

test('/mean-max: metric defaults to power, else speed; metric=speed; a metric the activity lacks is an empty frame', async (t) => {
  const csv = await getFrame(service, token, path('speedcsv', 'mean-max'));
  checkShape(t, csv, MEAN_MAX_SHAPE('speed'));
  checkSpeedCurve(
    t,
    csv,
    a.speedcsv.grid,
    DEFAULT_GRID.filter((d) => d <= 300),
  );
  // The CSV's speeds are multiples of 0.25: sums are exact, so the curve is identical to the plain one.
  t.deepEqual(
    csv.parquet.columns,
    expectedMeanMax(
      a.speedcsv.grid,
      'speed',
      DEFAULT_GRID.filter((d) => d <= 300),
    ),
  );
  t.is(csv.parquet.columns.speed![0], 6.25);

  const noPower = await getFrame(service, token, path('nopower', 'mean-max', 'durations=1,60,3600'));
  checkShape(t, noPower, MEAN_MAX_SHAPE('speed'));
  checkSpeedCurve(t, noPower, a.nopower.grid, [1, 60, 3600]);

  const speed = await getFrame(service, token, path('ride', 'mean-max', 'metric=speed&durations=1,10,600,7200'));
  checkShape(t, speed, MEAN_MAX_SHAPE('speed'));
  checkSpeedCurve(t, speed, a.ride.grid, [1, 10, 600, 7200]);

  const lacking = await getFrame(service, token, path('nopower', 'mean-max', 'metric=power'));
  checkShape(t, lacking, MEAN_MAX_SHAPE('power'));
  t.is(lacking.parquet.rows, 0);
});

test('/mean-max segmentation=true: within 5 W of the exact curve', async (t) => {
  for (const key of ['ride', 'tiny'] as const) {
    const g = a[key].grid;
    const answer = await getFrame(service, token, path(key, 'mean-max', 'segmentation=true&durations=all'));
    checkShape(t, answer, MEAN_MAX_SHAPE('power'));
    const grid = allGrid(g.length);
    t.deepEqual(answer.parquet.columns.duration, grid);
    const exact = plainMeanMax(zeroFilled(g.channels.power!), grid).best;
    const far = grid.filter((_d, k) => !(Math.abs((answer.parquet.columns.power![k] as number) - exact[k]!) <= 5 + 1e-9));
    t.deepEqual(far, [], `${key}: durations further than 5 W from the exact mean-max`);
    // Each start is the start of a window whose exact mean is within 2 × 5 W of the best.
    const x = zeroFilled(g.channels.power!);
    const wrong = grid.filter((d, k) => {
      const i = ((answer.parquet.ms.start![k] as number) - g.start) / 1000;
      let sum = 0;
      for (let j = i; j < i + d; j++) sum += x[j]!;
      return !(i >= 0 && i + d <= x.length && sum / d >= exact[k]! - 10 - 1e-9);
    });
    t.deepEqual(wrong, [], `${key}: starts of windows not within 10 W of the best`);
  }
});

test('/mean-max: 422 naming query.durations for malformed durations and query.metric for an unknown metric', async (t) => {
  for (const bad of ['abc', '0', '-5', '5,,6', 'all,5', '1.5', '']) {
    const res = await get(service, token, path('ride', 'mean-max', `durations=${encodeURIComponent(bad)}`));
    if (bad === '') {
      // An empty value is an empty item: rejected, not the default.
      t.is(res.status, 422, 'empty durations');
      continue;
    }
    t.is(res.status, 422, bad);
    t.deepEqual(jsonOf(res).detail[0].loc.slice(0, 2), ['query', 'durations'], bad);
  }
  for (const metric of ['cadence', 'heart_rate', 'watts']) {
    const res = await get(service, token, path('ride', 'mean-max', `metric=${metric}`));
    t.is(res.status, 422, metric);
    t.deepEqual(jsonOf(res).detail[0].loc.slice(0, 2), ['query', 'metric'], metric);
  }
  const seg = await get(service, token, path('ride', 'mean-max', 'segmentation=maybe'));
  t.is(seg.status, 422);
  t.deepEqual(jsonOf(seg).detail[0].loc.slice(0, 2), ['query', 'segmentation']);
});

// ---------------------------------------------------------------------------------------------
// /accumulated-work-duration

function expectedAwd(g: IngestedActivity, metric: 'power' | 'speed' | 'heart_rate') {
  const step = metric === 'speed' ? 0.01 : 1;
  const { levels, durations } = plainAwd(g.channels[metric]!, step);
  return { [metric]: levels, duration: durations };
}

const AWD_SHAPE = (metric: string): [string, Kind][] => [
  [metric, 'double'],
  ['duration', 'int32'],
];

test('/accumulated-work-duration: descending levels, seconds at or above each; default metric power for cycling, speed otherwise', async (t) => {
  const ride = await getFrame(service, token, path('ride', 'accumulated-work-duration'));
  checkShape(t, ride, AWD_SHAPE('power'));
  t.deepEqual(ride.parquet.columns, expectedAwd(a.ride.grid, 'power'));
  const p = ride.parquet.columns.power as number[];
  t.is(p[0], Math.max(...a.ride.grid.channels.power!), 'the first row is the highest level reached');
  t.is(p.at(-1), 1);
  t.is(ride.parquet.columns.duration!.at(-1), a.ride.grid.channels.power!.filter((x) => x >= 1).length, 'level 1: seconds at ≥ 1 W');

  const tiny = await getFrame(service, token, path('tiny', 'accumulated-work-duration'));
  t.deepEqual(tiny.parquet.columns, expectedAwd(a.tiny.grid, 'power'), 'gaps count at no level');

  const run = await getFrame(service, token, path('run', 'accumulated-work-duration'));
  checkShape(t, run, AWD_SHAPE('speed'));
  t.deepEqual(run.parquet.columns, expectedAwd(a.run.grid, 'speed'), 'running defaults to speed (0.01 m/s levels)');
  const levels = run.parquet.columns.speed as number[];
  t.true(levels.length > 100);
  t.is(levels.at(-1), 0.01);
  t.is(levelOf(levels[0]!, 0.01), levelOf(Math.max(...a.run.grid.channels.speed!.filter((x) => !Number.isNaN(x))), 0.01));

  const runPower = await getFrame(service, token, path('run', 'accumulated-work-duration', 'metric=power'));
  t.deepEqual(runPower.parquet.columns, expectedAwd(a.run.grid, 'power'));

  const hr = await getFrame(service, token, path('ride', 'accumulated-work-duration', 'metric=heart_rate'));
  checkShape(t, hr, AWD_SHAPE('heart_rate'));
  t.deepEqual(hr.parquet.columns, expectedAwd(a.ride.grid, 'heart_rate'));

  // A cycling activity without power: the default metric is still power, and the frame is empty.
  const noPower = await getFrame(service, token, path('nopower', 'accumulated-work-duration'));
  checkShape(t, noPower, AWD_SHAPE('power'));
  t.is(noPower.parquet.rows, 0);
  const noPowerSpeed = await getFrame(service, token, path('nopower', 'accumulated-work-duration', 'metric=speed'));
  t.deepEqual(noPowerSpeed.parquet.columns, expectedAwd(a.nopower.grid, 'speed'));

  const bad = await get(service, token, path('ride', 'accumulated-work-duration', 'metric=cadence'));
  t.is(bad.status, 422);
  t.deepEqual(jsonOf(bad).detail[0].loc.slice(0, 2), ['query', 'metric']);
});

// ---------------------------------------------------------------------------------------------
// Auth

test("auth on every per-activity endpoint: 401 without a token, 403 without data:read, 404 for another user's, unknown or malformed id", async (t) => {
  for (const what of ['data', 'mean-max', 'accumulated-work-duration']) {
    const own = path('ride', what);
    const none = await get(service, undefined, own);
    t.is(none.status, 401, `${what} without a token`);
    t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const bogus = await get(service, 'not.a.jwt', own);
    t.is(bogus.status, 401, `${what} with a malformed token`);
    const forbidden = await get(service, writeOnly, own);
    t.is(forbidden.status, 403, `${what} with data:write only`);
    t.regex(forbidden.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    t.is((await get(service, otherToken, own)).status, 404, `${what} of another user's activity`);
    t.is((await get(service, otherToken, `${own}?format=json`)).status, 404, `${what} of another user's activity (json)`);
    t.is((await get(service, token, `/api/v1/activities/00000000-0000-4000-8000-000000000000/${what}`)).status, 404, `${what} unknown id`);
    t.is((await get(service, token, `/api/v1/activities/not-an-id/${what}`)).status, 404, `${what} malformed id`);
    const nf = await get(service, token, `/api/v1/activities/not-an-id/${what}?format=json`);
    t.is(typeof jsonOf(nf).detail, 'string');
  }
});

// ---------------------------------------------------------------------------------------------
// Content negotiation

test('content negotiation: Parquet unless JSON is preferred; format wins over Accept', async (t) => {
  const base = path('tiny', 'mean-max', 'durations=5');
  const kind = async (headers: Record<string, string>, query = '') => {
    const res = await get(service, token, `${base}${query}`, headers);
    t.is(res.status, 200);
    return res.headers.get('content-type')?.split(';')[0];
  };
  t.is(await kind({}), 'application/vnd.apache.parquet');
  t.is(await kind({ accept: '*/*' }), 'application/vnd.apache.parquet');
  t.is(await kind({ accept: 'application/vnd.apache.parquet' }), 'application/vnd.apache.parquet');
  t.is(await kind({ accept: 'application/json;q=0.5, application/vnd.apache.parquet' }), 'application/vnd.apache.parquet');
  t.is(await kind({ accept: 'application/json, application/vnd.apache.parquet;q=0.5' }), 'application/json');
  t.is(await kind({ accept: 'application/json' }, '&format=parquet'), 'application/vnd.apache.parquet');
  t.is(await kind({ accept: 'application/vnd.apache.parquet' }, '&format=json'), 'application/json');
});

test('frames chosen by the Accept header say so: Vary: Accept (as longitudinal-data does)', async (t) => {
  const paths = [
    path('tiny', 'data'),
    path('tiny', 'mean-max'),
    path('tiny', 'accumulated-work-duration'),
    '/api/v1/activities/longitudinal-mean-max',
    '/api/v1/activities/longitudinal-accumulated-work-duration',
    '/api/v1/activities/longitudinal-data?sport=swimming',
  ];
  const missing: string[] = [];
  for (const p of paths) {
    for (const headers of [{}, { accept: 'application/json' }] as Record<string, string>[]) {
      const res = await get(service, token, p, headers);
      t.is(res.status, 200, p);
      if (!/\baccept\b/i.test(res.headers.get('vary') ?? '')) missing.push(`${p} (${headers.accept ?? 'no Accept'})`);
    }
  }
  t.deepEqual(missing, [], 'responses without Vary: Accept');
});
