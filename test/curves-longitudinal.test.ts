/**
 * Longitudinal curve endpoints as a client sees them (longitudinal-mean-max, longitudinal-data,
 * longitudinal-accumulated-work-duration, the intensity-duration model), their cache, time limit
 * and the stored-curves recompute job. Parquet is read back with hyparquet; every expectation is
 * computed here from the API's definitions on the 1 Hz grids the ingest step makes of the same
 * bytes (plain mean-max per activity, merged by hand; AWD counted per day; numpy-linear
 * percentiles), never taken from the endpoints themselves.
 */
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { buildActivityFit, type RecordFields } from './helpers/fit-builder.ts';
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
  levelValue,
  nullable,
  plainMeanMax,
  plainMeanMaxAll,
  plainValueIndexed,
  poll,
  quantile,
  zeroFilled,
  type FrameAnswer,
  type Kind,
} from './helpers/curves.ts';
import { enqueueCurves } from '../workers/queues.ts';
import type { IngestedActivity } from '../engine/ingest/ingested.ts';
import type { User } from '../db/database.ts';

const fixture = (name: string) => new Uint8Array(readFileSync(join(fixturesDir(), 'fit', name)));

/** A synthetic one-session FIT file with controlled samples. */
function synthetic(
  sport: string,
  subSport: string | undefined,
  startIso: string,
  seconds: number,
  offset: number,
  record: (i: number) => RecordFields,
): Uint8Array {
  return buildActivityFit({
    utcOffsetSeconds: offset,
    sessions: [{ sport, ...(subSport ? { subSport } : {}), start: new Date(startIso), seconds, record }],
  });
}

/**
 * The synthetic activities (all in 2024, so the `after` range of one year holds them), with values
 * chosen so that who owns which level is known:
 * - S1 cycling.road 1200 s at 250 W; S4 the same ride a month later (ties go to the older S1);
 * - S2 cycling 30 s at 600 W then 570 s at 150 W (levels 251…600 with sport=cycling);
 * - S3 running 300 s at 300 W, on S2's local day (its AWD adds to S2's; owns 251…300 without a sport filter).
 * Speeds are multiples of 0.25 m/s, so every sum is exact.
 */
const SYNTHETIC = {
  S1: () =>
    synthetic('cycling', 'road', '2024-03-01T08:00:00Z', 1200, 3600, (i) => ({
      power: 250,
      heartRate: 140,
      speed: i < 60 ? 12.5 : 8,
      distance: i * 8,
    })),
  S2: () =>
    synthetic('cycling', undefined, '2024-03-05T08:00:00Z', 600, 3600, (i) => ({
      power: i < 30 ? 600 : 150,
      heartRate: i < 30 ? 170 : 130,
      speed: i < 30 ? 15 : 10,
      distance: i * 10,
    })),
  S3: () =>
    synthetic('running', undefined, '2024-03-05T18:00:00Z', 300, 3600, () => ({ power: 300, heartRate: 160, speed: 4, distance: 0 })),
  S4: () =>
    synthetic('cycling', undefined, '2024-04-01T07:00:00Z', 1200, 7200, () => ({ power: 250, heartRate: 135, speed: 8, distance: 0 })),
};
const REAL = { R1: '4078723797.fit', R2: 'Garmin830_with_Stages.fit', R3: 'SigmaRox11_1.fit', R4: 'HRV-Data.fit' };
type Key = keyof typeof SYNTHETIC | keyof typeof REAL;

interface Act {
  key: string;
  id: string;
  sport: string;
  start: number;
  offset: number;
  length: number;
  grid: IngestedActivity;
}

let service: TestService;
let user: User;
let token: string;
const acts = {} as Record<Key, Act>;

async function uploadOne(_u: User, tok: string, key: string, bytes: Uint8Array): Promise<Act> {
  const [source] = await uploadAndWait(service, tok, [{ name: `${key}.fit`, bytes }]);
  if (source.status !== 'processed' || source.activity_ids.length !== 1) throw new Error(`${key}: ${JSON.stringify(source)}`);
  const [grid] = await ingested(bytes);
  return {
    key,
    id: source.activity_ids[0],
    sport: grid!.sport,
    start: grid!.start,
    offset: grid!.utcOffsetSeconds,
    length: grid!.length,
    grid: grid!,
  };
}

test.before(async () => {
  service = await startTestService({ workers: true });
  user = await createTestUser(service);
  token = await tokenFor(service, user, ['data:read', 'data:write']);
  await Promise.all([
    ...Object.entries(REAL).map(async ([key, file]) => (acts[key as Key] = await uploadOne(user, token, key, fixture(file)))),
    ...Object.entries(SYNTHETIC).map(async ([key, make]) => (acts[key as Key] = await uploadOne(user, token, key, make()))),
  ]);
  // The plan above, as ingested.
  const expect: Record<Key, string> = {
    R1: 'cycling',
    R2: 'cycling',
    R3: 'cycling.road',
    R4: 'running',
    S1: 'cycling.road',
    S2: 'cycling',
    S3: 'running',
    S4: 'cycling',
  };
  for (const [key, sport] of Object.entries(expect))
    if (acts[key as Key].sport !== sport) throw new Error(`${key} is ${acts[key as Key].sport}`);
});
test.after.always(() => service?.close());

// ---------------------------------------------------------------------------------------------
// Plain expectations

type Metric = 'power' | 'speed';
const stepOf = (metric: string) => (metric === 'speed' ? 0.01 : 1);

/** Oldest first (the product's tie-break order is documented as "the older activity"). */
const ordered = (list: Act[]) => [...list].sort((x, y) => x.start - y.start || (x.id < y.id ? -1 : 1));
const pick = (...keys: Key[]) => ordered(keys.map((k) => acts[k]));
const ALL: Key[] = ['R1', 'R2', 'R3', 'R4', 'S1', 'S2', 'S3', 'S4'];

function series(a: Act, metric: string): Float64Array | null {
  const c = (a.grid.channels as Record<string, Float64Array | undefined>)[metric];
  return c?.some((x) => !Number.isNaN(x)) ? zeroFilled(c) : null;
}

/** Where the part after `threshold` of accumulated Σx (J or m) begins: the first i with Σ x[0..i) ≥ threshold; null when none is left. */
function cutAfter(x: Float64Array, threshold: number): number | null {
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    if (sum >= threshold) return i;
    sum += x[i]!;
  }
  return null;
}

const fullCurves = new Map<string, { best: Float64Array; start: Int32Array }>();
function suffixCurve(a: Act, metric: string, x: Float64Array, cut: number) {
  const key = `${a.id}:${metric}:${cut}`;
  let c = fullCurves.get(key);
  if (!c) fullCurves.set(key, (c = plainMeanMaxAll(x.subarray(cut))));
  return c;
}

const afterThreshold = (metric: Metric, after: number) => (metric === 'power' ? after * 1000 : after);

/** Value-indexed envelope: per level (ascending), the longest duration of any activity (older wins ties), its start and owner. */
function expectedLevels(list: Act[], metric: Metric, after?: number) {
  const step = stepOf(metric);
  const duration: number[] = [];
  const start: number[] = [];
  const owner: Act[] = [];
  for (const a of ordered(list)) {
    const x = series(a, metric);
    if (!x) continue;
    const cut = after === undefined ? 0 : cutAfter(x, afterThreshold(metric, after));
    if (cut === null) continue;
    const c = suffixCurve(a, metric, x, cut);
    const vi = plainValueIndexed(c.best, c.start, step);
    vi.duration.forEach((d, k) => {
      if (!(duration[k]! >= d)) {
        duration[k] = d;
        start[k] = a.start + (cut + vi.start[k]!) * 1000;
        owner[k] = a;
      }
    });
  }
  return {
    [metric]: duration.map((_, k) => levelValue(k + 1, step)),
    duration,
    start: start.map(isoZ),
    activity_id: owner.map((a) => a.id),
    sport: owner.map((a) => a.sport),
    ...(after === undefined ? {} : { after: duration.map(() => after) }),
  } as Record<string, unknown[]>;
}

/** by=duration rows: per `after` (in the order given) and duration, the best mean over the activities' parts after it. */
function expectedByDuration(list: Act[], afters: number[], asked?: number[]) {
  const withPower = ordered(list).filter((a) => series(a, 'power'));
  const longest = Math.max(...withPower.map((a) => a.length));
  const grid = (asked ?? DEFAULT_GRID).filter((d) => d <= longest);
  const out: Record<string, unknown[]> = { duration: [], power: [], start: [], activity_id: [], sport: [], after: [] };
  for (const after of afters) {
    for (const d of grid) {
      let best = -Infinity;
      let at = 0;
      let owner: Act | undefined;
      for (const a of withPower) {
        const x = series(a, 'power')!;
        const cut = cutAfter(x, after * 1000);
        if (cut === null || x.length - cut < d) continue;
        const r = plainMeanMax(x.subarray(cut), [d]);
        if (r.best[0]! > best) {
          best = r.best[0]!;
          at = a.start + (cut + r.start[0]!) * 1000;
          owner = a;
        }
      }
      if (!owner) continue;
      out.duration!.push(d);
      out.power!.push(best);
      out.start!.push(isoZ(at));
      out.activity_id!.push(owner.id);
      out.sport!.push(owner.sport);
      out.after!.push(after);
    }
  }
  return out;
}

function concatColumns(parts: Record<string, unknown[]>[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const p of parts) for (const [k, v] of Object.entries(p)) (out[k] ??= []).push(...v);
  return out;
}

/** Longitudinal AWD from its definition: per local day the seconds at or above each level (activities of a day summed); max and numpy-linear percentiles over the days. */
function expectedLongAwd(list: Act[], metric: 'power' | 'speed' | 'heart_rate') {
  const step = stepOf(metric);
  const days = new Map<string, number[]>();
  for (const a of list) {
    const c = (a.grid.channels as Record<string, Float64Array | undefined>)[metric];
    if (!c?.some((x) => !Number.isNaN(x))) continue;
    const day = isoLocal(a.start + a.offset * 1000).slice(0, 10);
    const counts = days.get(day) ?? [];
    const levels = Array.from(c, (x) => (Number.isNaN(x) ? 0 : levelOf(x, step)));
    const top = Math.max(0, ...levels);
    for (let k = 1; k <= top; k++) counts[k - 1] = (counts[k - 1] ?? 0) + levels.filter((l) => l >= k).length;
    days.set(day, counts);
  }
  const perDay = [...days.values()];
  const top = Math.max(0, ...perDay.map((c) => c.length));
  const out: Record<string, unknown[]> = { [metric]: [], max: [], hard: [], medium: [], easy: [] };
  for (let k = top; k >= 1; k--) {
    const values = perDay.map((c) => c[k - 1] ?? 0);
    out[metric]!.push(levelValue(k, step));
    out.max!.push(Math.max(...values));
    out.hard!.push(quantile(values, 0.9));
    out.medium!.push(quantile(values, 0.75));
    out.easy!.push(quantile(values, 0.5));
  }
  return { columns: out, days: days.size };
}

/** The frame has exactly these columns (names, order, Parquet types), and its JSON carries the same values. */
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

const LEVEL_SHAPE = (metric: string, after = false): [string, Kind][] => [
  [metric, 'double'],
  ['duration', 'int32'],
  ['start', 'timestamptz'],
  ['activity_id', 'string'],
  ['sport', 'string'],
  ...(after ? [['after', 'double'] as [string, Kind]] : []),
];
const DURATION_SHAPE: [string, Kind][] = [
  ['duration', 'int32'],
  ['power', 'double'],
  ['start', 'timestamptz'],
  ['activity_id', 'string'],
  ['sport', 'string'],
  ['after', 'double'],
];
const LMM = '/api/v1/activities/longitudinal-mean-max';
const LDATA = '/api/v1/activities/longitudinal-data';
const LAWD = '/api/v1/activities/longitudinal-accumulated-work-duration';
const MODEL = '/api/v1/profile/intensity-duration-model';

/** Column-wise deepEqual with a readable message: the first row that differs. */
function sameColumns(t: ExecutionContext, got: Record<string, unknown[]>, want: Record<string, unknown[]>, label: string) {
  t.deepEqual(Object.keys(got), Object.keys(want), `${label}: columns`);
  for (const name of Object.keys(want)) {
    const g = got[name] ?? [];
    const w = want[name]!;
    const i = Array.from({ length: Math.max(g.length, w.length) }, (_, k) => k).find((k) => g[k] !== w[k]);
    t.is(
      i,
      undefined,
      `${label}: ${name} differs first at row ${i} (got ${String(g[i ?? 0])}, want ${String(w[i ?? 0])}; ${g.length} vs ${w.length} rows)`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// longitudinal-mean-max without after: value-indexed, from the stored curves

test('longitudinal-mean-max: value-indexed rows ascending by level, the longest duration of any activity, its owner and start; pandas index', async (t) => {
  const answer = await getFrame(service, token, LMM);
  checkShape(t, answer, LEVEL_SHAPE('power'));
  const want = expectedLevels(pick(...ALL), 'power');
  sameColumns(t, answer.parquet.columns, want, 'all activities');
  t.true((want.power as number[]).length > 1000, 'the envelope reaches past 1000 W');
  const pandas = JSON.parse(answer.parquet.kv.pandas ?? 'null');
  t.deepEqual(pandas?.index_columns, ['power'], 'pandas metadata names the metric as the index');
  t.deepEqual(
    pandas.columns.map((c: { name: string }) => c.name),
    ['power', 'duration', 'start', 'activity_id', 'sport'],
  );
  t.is(answer.headers.get('deprecation'), null);
  t.regex(answer.headers.get('x-request-id') ?? '', /./);
});

test('longitudinal-mean-max: sport filter (cycling matches cycling.road) and start/end; who owns which level', async (t) => {
  const spring = await getFrame(service, token, `${LMM}?start=2024-03-01&end=2024-04-30`);
  sameColumns(t, spring.parquet.columns, expectedLevels(pick('S1', 'S2', 'S3', 'S4'), 'power'), 'spring');
  const row = (answer: FrameAnswer, level: number) => {
    const i = (answer.parquet.columns.power as number[]).indexOf(level);
    return i < 0
      ? undefined
      : {
          duration: answer.parquet.columns.duration![i],
          activity: answer.parquet.columns.activity_id![i],
          start: answer.parquet.columns.start![i],
        };
  };
  // Levels up to 250 W: S1's 1200 s (S4 ties and is newer); 251–300: the 300 s run; then S2's 600 W start.
  t.deepEqual(row(spring, 250), { duration: 1200, activity: acts.S1.id, start: '2024-03-01T08:00:00Z' });
  t.deepEqual(row(spring, 1), { duration: 1200, activity: acts.S1.id, start: '2024-03-01T08:00:00Z' });
  t.deepEqual(row(spring, 251), { duration: 300, activity: acts.S3.id, start: '2024-03-05T18:00:00Z' });
  t.deepEqual(row(spring, 301), { duration: 89, activity: acts.S2.id, start: '2024-03-05T08:00:00Z' });
  t.deepEqual(row(spring, 600), { duration: 30, activity: acts.S2.id, start: '2024-03-05T08:00:00Z' });
  t.is(spring.parquet.rows, 600);

  const cycling = await getFrame(service, token, `${LMM}?start=2024-03-01&end=2024-04-30&sport=cycling`);
  sameColumns(t, cycling.parquet.columns, expectedLevels(pick('S1', 'S2', 'S4'), 'power'), 'spring cycling');
  // Without the run, level 251 comes from S2: (30·600 + (d−30)·150)/d ≥ 251 ⇔ d ≤ 133.
  t.deepEqual(row(cycling, 251), { duration: 133, activity: acts.S2.id, start: '2024-03-05T08:00:00Z' });
  t.true((cycling.parquet.columns.sport as string[]).every((s) => s.startsWith('cycling')));

  const allCycling = await getFrame(service, token, `${LMM}?sport=cycling`);
  sameColumns(t, allCycling.parquet.columns, expectedLevels(pick('R1', 'R2', 'R3', 'S1', 'S2', 'S4'), 'power'), 'sport=cycling');
  const road = await getFrame(service, token, `${LMM}?sport=cycling.road`);
  sameColumns(t, road.parquet.columns, expectedLevels(pick('R3', 'S1'), 'power'), 'sport=cycling.road');
  const both = await getFrame(service, token, `${LMM}?sport=running&sport=cycling.road`);
  sameColumns(t, both.parquet.columns, expectedLevels(pick('R3', 'R4', 'S1', 'S3'), 'power'), 'sport=running&sport=cycling.road');
  const nothing = await getFrame(service, token, `${LMM}?sport=swimming`);
  checkShape(t, nothing, LEVEL_SHAPE('power'));
  t.is(nothing.parquet.rows, 0);

  // An instant bound compares the UTC start.
  const instants = await getFrame(service, token, `${LMM}?start=2024-03-05T08:00:00Z&end=2024-03-05T18:00:00Z`);
  sameColumns(t, instants.parquet.columns, expectedLevels(pick('S2', 'S3'), 'power'), 'instant bounds');

  // Speed, value-indexed at 0.01 m/s.
  const speed = await getFrame(service, token, `${LMM}?metric=speed&start=2024-03-01&end=2024-04-30`);
  checkShape(t, speed, LEVEL_SHAPE('speed'));
  sameColumns(t, speed.parquet.columns, expectedLevels(pick('S1', 'S2', 'S3', 'S4'), 'speed'), 'speed');
  t.is((speed.parquet.columns.speed as number[]).at(-1), 15);
  t.is(speed.headers.get('deprecation'), null);
  t.deepEqual(JSON.parse(speed.parquet.kv.pandas ?? 'null')?.index_columns, ['speed']);
});

// ---------------------------------------------------------------------------------------------
// with after

const YEAR = 'start=2024-01-01&end=2024-12-31';
const IN_2024: Key[] = ['R3', 'S1', 'S2', 'S3', 'S4'];

test('longitudinal-mean-max after (by=duration by default): one block per after value in the asked order, the plain definition', async (t) => {
  const answer = await getFrame(service, token, `${LMM}?${YEAR}&after=10&after=0`);
  checkShape(t, answer, DURATION_SHAPE);
  t.is(answer.headers.get('deprecation'), null);
  t.is(answer.parquet.kv.pandas === undefined || JSON.parse(answer.parquet.kv.pandas).index_columns.length === 0, true, 'index-free');
  sameColumns(t, answer.parquet.columns, expectedByDuration(pick(...IN_2024), [10, 0]), 'after=10&after=0');
  const afters = answer.parquet.columns.after as number[];
  t.is(afters[0], 10);
  t.is(afters.at(-1), 0);
  t.deepEqual(answer.parquet.columns.duration!.slice(0, 3), [1, 2, 5]);
  t.is(answer.parquet.columns.duration!.filter((d) => d === 7200).length, 2, 'the 2 h ride reaches 7200 s after both');

  // Without start, the range with after is the year up to end.
  const endOnly = await getFrame(service, token, `${LMM}?end=2024-12-31&after=10&after=0`);
  t.deepEqual(endOnly.parquet.columns, answer.parquet.columns, 'end=2024-12-31 alone: the year 2024');

  // after=0 is the whole activities: the same as their plain mean-max.
  const zero = await getFrame(service, token, `${LMM}?${YEAR}&after=0&durations=5,60,300,1200`);
  sameColumns(t, zero.parquet.columns, expectedByDuration(pick(...IN_2024), [0], [5, 60, 300, 1200]), 'after=0 at durations');

  // Comma-separated after values; durations; a large after that only the long ride reaches.
  const big = await getFrame(service, token, `${LMM}?${YEAR}&after=100,500&durations=all`);
  sameColumns(
    t,
    big.parquet.columns,
    expectedByDuration(pick(...IN_2024), [100, 500], allGrid(acts.R3.length)),
    'after=100,500 durations=all',
  );
  t.true((big.parquet.columns.activity_id as string[]).filter((_, i) => afters[i] === 500).every((id) => id === acts.R3.id));

  // The 2024 synthetic activities alone, where the winner is known: after 10 kJ, S2's 600 W part starts 17 s in.
  const spring = await getFrame(service, token, `${LMM}?start=2024-03-01&end=2024-04-30&sport=cycling&after=10&durations=5,13,14`);
  sameColumns(t, spring.parquet.columns, expectedByDuration(pick('S1', 'S2', 'S4'), [10], [5, 13, 14]), 'spring after=10');
  t.deepEqual(spring.parquet.columns.power!.slice(0, 2), [600, 600]);
  t.deepEqual(spring.parquet.columns.start!.slice(0, 2), ['2024-03-05T08:00:17Z', '2024-03-05T08:00:17Z']);
});

test('longitudinal-mean-max by=intensity with after: index-free value-indexed rows with an after column (Deprecation for power); speed with after', async (t) => {
  const answer = await getFrame(service, token, `${LMM}?${YEAR}&after=0&after=10&by=intensity`);
  checkShape(t, answer, LEVEL_SHAPE('power', true));
  t.is(answer.headers.get('deprecation') !== null, true, 'by=intensity for power is deprecated');
  t.true(answer.parquet.kv.pandas === undefined || JSON.parse(answer.parquet.kv.pandas).index_columns.length === 0, 'index-free');
  const want = concatColumns([expectedLevels(pick(...IN_2024), 'power', 0), expectedLevels(pick(...IN_2024), 'power', 10)]);
  sameColumns(t, answer.parquet.columns, want, 'by=intensity after=0,10');
  // after=0 by intensity is the stored envelope of the same activities.
  const stored = await getFrame(service, token, `${LMM}?${YEAR}`);
  const zeroRows = (answer.parquet.columns.after as number[]).filter((a) => a === 0).length;
  t.deepEqual(answer.parquet.columns.duration!.slice(0, zeroRows), stored.parquet.columns.duration);

  // metric=speed with after: by intensity (the only orientation), after in metres.
  const speed = await getFrame(service, token, `${LMM}?start=2024-03-01&end=2024-04-30&metric=speed&after=0&after=500`);
  checkShape(t, speed, LEVEL_SHAPE('speed', true));
  const four = pick('S1', 'S2', 'S3', 'S4');
  sameColumns(
    t,
    speed.parquet.columns,
    concatColumns([expectedLevels(four, 'speed', 0), expectedLevels(four, 'speed', 500)]),
    'speed after=0,500',
  );
  // After 500 m, S2's 15 m/s part (30 s, 450 m) is over: the top level is S1's 12.5 m/s (60 s, 750 m), 40 s in.
  const after500 = (speed.parquet.columns.after as number[]).map((a, i) => (a === 500 ? i : -1)).filter((i) => i >= 0);
  const top = after500.at(-1)!;
  t.is(speed.parquet.columns.speed![top], 12.5);
  t.is(speed.parquet.columns.activity_id![top], acts.S1.id);
  t.is(speed.parquet.columns.start![top], '2024-03-01T08:00:40Z');
  t.is(speed.parquet.columns.duration![top], 20);
});

test('longitudinal-mean-max: 422 naming the parameter', async (t) => {
  const cases: [string, string[]][] = [
    ['metric=cadence', ['metric']],
    ['metric=heart_rate', ['metric']],
    [`${YEAR}&after=1&after=2&after=3&after=4&after=5&after=6`, ['after']],
    [`${YEAR}&after=1,2,3,4,5,6`, ['after']],
    [`${YEAR}&after=abc`, ['after']],
    [`${YEAR}&after=-5`, ['after']],
    ['start=2024-01-01&end=2025-06-01&after=10', ['start', 'end']],
    ['by=duration', ['by']],
    [`${YEAR}&by=duration&after=10&metric=speed`, ['by']],
    [`${YEAR}&after=10&durations=abc`, ['durations']],
    [`${YEAR}&after=10&durations=0`, ['durations']],
    [`${YEAR}&after=10&durations=5,,6`, ['durations']],
    ['by=sideways', ['by']],
    ['start=yesterday', ['start']],
    ['date=2024-02-30', ['date']],
    ['window_days=0', ['window_days']],
    ['sport=Not%20A%20Sport', ['sport']],
  ];
  for (const [query, params] of cases) {
    const res = await get(service, token, `${LMM}?${query}`);
    t.is(res.status, 422, query);
    const detail = res.status === 422 ? jsonOf(res).detail : [];
    t.true(Array.isArray(detail) && detail.length > 0, query);
    t.true(
      detail.some((d: { loc: string[] }) => d.loc[0] === 'query' && params.includes(d.loc[1]!)),
      `${query}: a detail naming query.${params.join('|')}: ${JSON.stringify(detail)}`,
    );
  }
  // A range of exactly one (leap) year is allowed.
  t.is((await get(service, token, `${LMM}?${YEAR}&after=10`)).status, 200);
});

test('deprecated date/window_days: the same data as the equivalent start/end', async (t) => {
  const pairs: [string, string][] = [
    ['date=2024-04-30&window_days=61', 'start=2024-03-01&end=2024-04-30'],
    ['date=2024-04-30', 'start=2024-02-01&end=2024-04-30'],
    ['date=2024-03-05&window_days=1&sport=cycling', 'start=2024-03-05&end=2024-03-05&sport=cycling'],
  ];
  for (const [old, current] of pairs) {
    for (const base of [LMM, LAWD]) {
      const a = await getFrame(service, token, `${base}?${old}`);
      const b = await getFrame(service, token, `${base}?${current}`);
      t.deepEqual(a.parquet.columns, b.parquet.columns, `${base}?${old}`);
      t.true(a.parquet.rows > 0, `${base}?${old} has rows`);
    }
  }
  const a = await getFrame(service, token, `${LMM}?date=2024-04-30&window_days=61&after=10`);
  const b = await getFrame(service, token, `${LMM}?start=2024-03-01&end=2024-04-30&after=10`);
  t.deepEqual(a.parquet.columns, b.parquet.columns, 'with after');
});

test('Deprecation header exactly when a deprecated parameter (date, window_days, by=intensity for power) was used, whatever was asked before', async (t) => {
  // On a user of its own so that nothing was asked before; each pair in both orders.
  const u = await createTestUser(service);
  const tok = await tokenFor(service, u, ['data:read', 'data:write']);
  await uploadOne(u, tok, 'E1', SYNTHETIC.S1());
  const header = async (path: string) => (await get(service, tok, path)).headers.get('deprecation');
  const seen: string[] = [];
  const expectHeader = async (path: string, deprecated: boolean) => {
    const got = await header(path);
    if ((got !== null) !== deprecated) seen.push(`${path}: Deprecation ${got}, expected ${deprecated ? 'one' : 'none'}`);
  };
  for (const base of [LMM, LAWD]) {
    await expectHeader(`${base}?date=2024-04-30&window_days=61`, true); // deprecated form first
    await expectHeader(`${base}?start=2024-03-01&end=2024-04-30`, false);
    await expectHeader(`${base}?start=2024-03-02&end=2024-05-01`, false); // current form first
    await expectHeader(`${base}?date=2024-05-01&window_days=61`, true);
    await expectHeader(`${base}?date=2024-05-01&window_days=61&format=json`, true);
  }
  await expectHeader(`${LMM}?date=2024-04-30&window_days=61&after=10`, true);
  await expectHeader(`${LMM}?start=2024-03-01&end=2024-04-30&after=10`, false);
  // by=intensity for power is deprecated, with or without after; the default orientation is not.
  await expectHeader(`${LMM}?by=intensity`, true);
  await expectHeader(LMM, false);
  await expectHeader(`${LMM}?sport=cycling`, false);
  await expectHeader(`${LMM}?sport=cycling&by=intensity`, true);
  await expectHeader(`${LMM}?${YEAR}&after=5&by=intensity`, true);
  await expectHeader(`${LMM}?${YEAR}&after=5`, false);
  await expectHeader(`${LMM}?${YEAR}&after=5&by=duration`, false);
  await expectHeader(`${LMM}?metric=speed`, false);
  t.deepEqual(seen, [], 'Deprecation exactly when a deprecated parameter was used');
});

// ---------------------------------------------------------------------------------------------
// longitudinal-data

function expectedData(list: Act[], metrics: string[], rows?: (a: Act) => { at: number[]; len: number[] }) {
  const out: Record<string, unknown[]> = { timestamp: [], timestamp_local: [] };
  for (const m of metrics) out[m] = [];
  out.activity_id = [];
  out.sport = [];
  for (const a of ordered(list)) {
    const seg = rows ? rows(a) : { at: Array.from({ length: a.length }, (_, i) => i), len: new Array<number>(a.length).fill(1) };
    seg.at.forEach((i, r) => {
      out.timestamp!.push(isoZ(a.start + i * 1000));
      out.timestamp_local!.push(isoLocal(a.start + (i + a.offset) * 1000));
      for (const m of metrics) {
        if (m === 'duration') out[m]!.push(seg.len[r]);
        else {
          const c = (a.grid.channels as Record<string, Float64Array | undefined>)[m];
          if (!c) out[m]!.push(null);
          else {
            const xs = Array.from(c.subarray(i, i + seg.len[r]!)).filter((x) => !Number.isNaN(x));
            out[m]!.push(xs.length ? nullable([xs.reduce((s, x) => s + x, 0) / xs.length])[0] : null);
          }
        }
      }
      out.activity_id!.push(a.id);
      out.sport!.push(a.sport);
    });
  }
  return out;
}

const dataShape = (metrics: string[]): [string, Kind][] => [
  ['timestamp', 'timestamptz'],
  ['timestamp_local', 'timestamp'],
  ...metrics.map((m) => [m, m === 'duration' ? 'int32' : 'double'] as [string, Kind]),
  ['activity_id', 'string'],
  ['sport', 'string'],
];

test('longitudinal-data: the samples of every matching activity in time order, with activity_id and sport; duration always included', async (t) => {
  const spring = pick('S1', 'S2', 'S3', 'S4');
  const def = await getFrame(service, token, `${LDATA}?start=2024-03-01&end=2024-04-30`);
  const defaults = ['duration', 'power', 'speed', 'heart_rate'];
  checkShape(t, def, dataShape(defaults));
  sameColumns(t, def.parquet.columns, expectedData(spring, defaults), 'defaults');
  t.is(def.parquet.rows, 1200 + 600 + 300 + 1200);

  const power = await getFrame(service, token, `${LDATA}?start=2024-03-01&end=2024-04-30&metrics=power`);
  checkShape(t, power, dataShape(['duration', 'power']));
  sameColumns(t, power.parquet.columns, expectedData(spring, ['duration', 'power']), 'metrics=power');

  const ordered2 = await getFrame(service, token, `${LDATA}?start=2024-03-01&end=2024-04-30&metrics=heart_rate,duration,smo2`);
  checkShape(t, ordered2, dataShape(['heart_rate', 'duration', 'smo2']));
  sameColumns(t, ordered2.parquet.columns, expectedData(spring, ['heart_rate', 'duration', 'smo2']), 'metrics in the asked order');

  const running = await getFrame(service, token, `${LDATA}?sport=running&metrics=power`);
  sameColumns(t, running.parquet.columns, expectedData(pick('R4', 'S3'), ['duration', 'power']), 'sport=running');

  // The whole history, real files included.
  const all = await getFrame(service, token, `${LDATA}?metrics=power,cadence`);
  checkShape(t, all, dataShape(['duration', 'power', 'cadence']));
  sameColumns(t, all.parquet.columns, expectedData(pick(...ALL), ['duration', 'power', 'cadence']), 'everything');

  const none = await getFrame(service, token, `${LDATA}?sport=swimming`);
  checkShape(t, none, dataShape(defaults));
  t.is(none.parquet.rows, 0);
});

test('longitudinal-data with overlapping recordings (two devices on one ride): rows in time order, ties by activity id; apart, each activity in turn', async (t) => {
  const other = await createTestUser(service);
  const tok = await tokenFor(service, other, ['data:read', 'data:write']);
  const ride = (startIso: string, seconds: number, watts: number) =>
    synthetic('cycling', undefined, startIso, seconds, 3600, () => ({ power: watts, heartRate: 140, speed: 8, distance: 0 }));
  // A and B overlap (B starts 5 min into A, with the same timestamps from then on); C is a day later.
  const [a, b, c] = await Promise.all([
    uploadOne(other, tok, 'A', ride('2024-06-01T08:00:00Z', 600, 200)),
    uploadOne(other, tok, 'B', ride('2024-06-01T08:05:00Z', 600, 300)),
    uploadOne(other, tok, 'C', ride('2024-06-02T08:00:00Z', 120, 250)),
  ]);
  const answer = await getFrame(service, tok, `${LDATA}?metrics=power`);
  const rows = [a!, b!, c!].flatMap((x) =>
    Array.from({ length: x.length }, (_, i) => ({ at: x.start + i * 1000, id: x.id, power: x === a ? 200 : x === b ? 300 : 250 })),
  );
  rows.sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : 1));
  t.is(answer.parquet.rows, 1320);
  t.deepEqual(
    answer.parquet.columns.timestamp,
    rows.map((r) => isoZ(r.at)),
  );
  t.deepEqual(
    answer.parquet.columns.activity_id,
    rows.map((r) => r.id),
  );
  t.deepEqual(
    answer.parquet.columns.power,
    rows.map((r) => r.power),
  );
  t.deepEqual(
    answer.parquet.columns.timestamp_local,
    rows.map((r) => isoLocal(r.at + 3600_000)),
  );

  // Without the overlap (the day after alone, then A and C): one activity after the other.
  const apart = await getFrame(service, tok, `${LDATA}?metrics=power&start=2024-06-02`);
  t.deepEqual(apart.parquet.columns.activity_id, new Array(120).fill(c!.id));
});

test('Parquet answers are saved as <what>.parquet (Content-Disposition); JSON answers carry none', async (t) => {
  const get = (path: string, accept?: string) =>
    fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}`, ...(accept ? { accept } : {}) } });
  const curve = await get(`${LMM}?metric=power`);
  t.is(curve.status, 200);
  t.is(curve.headers.get('content-disposition'), 'attachment; filename="longitudinal-mean-max.parquet"');
  const data = await get(`${LDATA}?metrics=power`);
  t.is(data.headers.get('content-disposition'), 'attachment; filename="longitudinal-data.parquet"');
  await data.arrayBuffer();
  const one = await get(`/api/v1/activities/${acts.S1.id}/mean-max`);
  t.is(one.headers.get('content-disposition'), `attachment; filename="${acts.S1.id}-mean-max.parquet"`);
  const json = await get(`${LMM}?metric=power`, 'application/json');
  t.is(json.headers.get('content-disposition'), null);
});

test('longitudinal-data segmentation_on=power: one row per segment, its duration and means', async (t) => {
  const answer = await getFrame(service, token, `${LDATA}?start=2024-03-01&end=2024-04-30&segmentation_on=power&metrics=power,heart_rate`);
  checkShape(t, answer, dataShape(['duration', 'power', 'heart_rate']));
  const segments: Record<string, { at: number[]; len: number[] }> = {
    S1: { at: [0], len: [1200] },
    S2: { at: [0, 30], len: [30, 570] },
    S3: { at: [0], len: [300] },
    S4: { at: [0], len: [1200] },
  };
  sameColumns(
    t,
    answer.parquet.columns,
    expectedData(pick('S1', 'S2', 'S3', 'S4'), ['duration', 'power', 'heart_rate'], (a) => segments[a.key]!),
    'segments',
  );
  t.deepEqual(answer.parquet.columns.power, [250, 600, 150, 300, 250]);

  // The real rides: segments cover each activity exactly, every sample within 5 W of its segment.
  const real = await getFrame(service, token, `${LDATA}?sport=cycling&start=2019-01-01&end=2020-12-31&segmentation_on=power&metrics=power`);
  let bad = 0;
  for (const a of pick('R1', 'R2')) {
    const rows = (real.parquet.columns.activity_id as string[]).map((id, r) => (id === a.id ? r : -1)).filter((r) => r >= 0);
    let at = 0;
    for (const r of rows) {
      const d = real.parquet.columns.duration![r] as number;
      const v = real.parquet.columns.power![r] as number | null;
      if (real.parquet.ms.timestamp![r] !== a.start + at * 1000) bad++;
      for (let i = at; i < at + d; i++) {
        const x = a.grid.channels.power![i]!;
        if (Number.isNaN(x) ? v !== null : v === null || Math.abs(x - v) > 5 + 1e-9) bad++;
      }
      at += d;
    }
    t.is(at, a.length, `${a.key}: segments cover the activity`);
  }
  t.is(bad, 0);
});

// ---------------------------------------------------------------------------------------------
// longitudinal AWD

const AWD_SHAPE = (metric: string): [string, Kind][] => [
  [metric, 'double'],
  ['max', 'int32'],
  ['hard', 'double'],
  ['medium', 'double'],
  ['easy', 'double'],
];

test('longitudinal AWD: per level max/hard/medium/easy over training days (a day sums its activities); default metric', async (t) => {
  const spring = await getFrame(service, token, `${LAWD}?start=2024-03-01&end=2024-04-30`);
  checkShape(t, spring, AWD_SHAPE('power'));
  const want = expectedLongAwd(pick('S1', 'S2', 'S3', 'S4'), 'power');
  t.is(want.days, 3, 'S2 and S3 share a local day');
  sameColumns(t, spring.parquet.columns, want.columns, 'spring power');
  // Level 250 W: days 1200 (S1), 30 + 300 (S2 + S3), 1200 (S4) → max 1200, median 1200, p90 1200; level 300: 0, 330, 0.
  const at = (level: number) => (spring.parquet.columns.power as number[]).indexOf(level);
  t.is(spring.parquet.columns.max![at(250)], 1200);
  t.is(spring.parquet.columns.max![at(300)], 330);
  t.is(spring.parquet.columns.hard![at(300)], 264);
  t.is(spring.parquet.columns.easy![at(300)], 0);
  t.is(spring.parquet.columns.power![0], 600);

  const all = await getFrame(service, token, LAWD);
  sameColumns(t, all.parquet.columns, expectedLongAwd(pick(...ALL), 'power').columns, 'whole history, power');

  const running = await getFrame(service, token, `${LAWD}?sport=running`);
  checkShape(t, running, AWD_SHAPE('speed'));
  sameColumns(t, running.parquet.columns, expectedLongAwd(pick('R4', 'S3'), 'speed').columns, 'running → speed');

  const cycling = await getFrame(service, token, `${LAWD}?sport=cycling`);
  checkShape(t, cycling, AWD_SHAPE('power'));
  sameColumns(t, cycling.parquet.columns, expectedLongAwd(pick('R1', 'R2', 'R3', 'S1', 'S2', 'S4'), 'power').columns, 'cycling → power');

  const hr = await getFrame(service, token, `${LAWD}?start=2024-03-01&end=2024-04-30&metric=heart_rate`);
  checkShape(t, hr, AWD_SHAPE('heart_rate'));
  sameColumns(t, hr.parquet.columns, expectedLongAwd(pick('S1', 'S2', 'S3', 'S4'), 'heart_rate').columns, 'heart_rate');

  const none = await getFrame(service, token, `${LAWD}?sport=swimming`);
  t.is(none.parquet.rows, 0);
  const bad = await get(service, token, `${LAWD}?metric=cadence`);
  t.is(bad.status, 422);
  t.deepEqual(jsonOf(bad).detail[0].loc.slice(0, 2), ['query', 'metric']);
});

// ---------------------------------------------------------------------------------------------
// intensity-duration model

test('intensity-duration model: fitted to the best efforts of the 90 days up to date; index; none without activities; by=duration is 422', async (t) => {
  // The window 2019-06-23 … 2019-09-20 holds one real ride (R1).
  const res = await api(service, token, 'GET', `${MODEL}?date=2019-09-20`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  const { curve, parameters } = res.body;
  t.truthy(parameters, JSON.stringify(res.body).slice(0, 300));
  t.like(parameters, { model: '3-parameter critical power', metric: 'power', start: '2019-06-23', end: '2019-09-20' });
  const { critical_intensity: cp, work_capacity: w, max_intensity: pmax } = parameters;
  t.true(cp > 0 && cp < pmax, JSON.stringify(parameters));
  t.true(w > 0);
  // The efforts: the corners of the ride's value-indexed envelope up to 30 min (for each distinct longest duration, the highest level).
  const env = expectedLevels([acts.R1], 'power') as { duration: number[] };
  const efforts: [number, number][] = [];
  for (let k = env.duration.length; k >= 1; k--) {
    const d = env.duration[k - 1] as number;
    if (d > 1800 || efforts.at(-1)?.[0] === d) continue;
    efforts.push([d, k]);
  }
  t.is(parameters.efforts, efforts.length, 'fitted to the corners of the envelope up to 1800 s');
  const model = (d: number) => (w * pmax + d * cp * (pmax - cp)) / (w + d * (pmax - cp));
  const rmse = Math.sqrt(efforts.reduce((s, [d, y]) => s + (model(d) - y) ** 2, 0) / efforts.length);
  t.true(Math.abs(rmse - parameters.rmse) <= 1e-6 * rmse, `rmse ${parameters.rmse} vs ${rmse} recomputed over the efforts`);
  // Default index: the durations=all grid up to the longest effort (the whole ride); intensities from the documented formula.
  t.deepEqual(
    curve.map((p: { duration: number }) => p.duration),
    allGrid(env.duration[0] as number),
  );
  t.is(env.duration[0], acts.R1.length);
  t.true(
    curve.every((p: { duration: number; intensity: number }) => Math.abs(p.intensity - model(p.duration)) <= 1e-6 * model(p.duration)),
  );
  t.true(curve[0].intensity > curve.at(-1).intensity, 'decreasing with duration');

  const index = await api(service, token, 'GET', `${MODEL}?date=2019-09-20&index=300,60`);
  t.is(index.status, 200);
  t.deepEqual(
    index.body.curve.map((p: { duration: number }) => p.duration),
    [60, 300],
  );
  t.deepEqual(index.body.parameters, parameters);
  // The window ends at `date`: the day before the ride has nothing; 89 days after it still has the ride, 90 days after not.
  t.deepEqual((await api(service, token, 'GET', `${MODEL}?date=2019-09-19`)).body, { curve: [], parameters: null, test: null });
  t.deepEqual(
    (await api(service, token, 'GET', `${MODEL}?date=2019-12-18&sport=cycling`)).body.parameters,
    parameters.efforts ? { ...parameters, start: '2019-09-20', end: '2019-12-18' } : null,
  );
  t.deepEqual((await api(service, token, 'GET', `${MODEL}?date=2019-12-19&sport=cycling`)).body, {
    curve: [],
    parameters: null,
    test: null,
  });
  t.deepEqual((await api(service, token, 'GET', `${MODEL}?date=2019-09-20&sport=running`)).body, {
    curve: [],
    parameters: null,
    test: null,
  });
  t.deepEqual((await api(service, token, 'GET', `${MODEL}?date=2010-01-01`)).body, { curve: [], parameters: null, test: null });
  for (const [query, param] of [
    ['by=duration', 'by'],
    ['date=2024-13-01', 'date'],
    ['index=abc', 'index'],
    ['metric=cadence', 'metric'],
  ]) {
    const bad = await api(service, token, 'GET', `${MODEL}?${query}`);
    t.is(bad.status, 422, query);
    t.deepEqual(bad.body.detail[0].loc.slice(0, 2), ['query', param], query);
  }
});

// ---------------------------------------------------------------------------------------------
// Auth

test('auth on the longitudinal endpoints: 401 without a token, 403 without data:read; another user sees only their own (nothing)', async (t) => {
  const writeOnly = await tokenFor(service, user, ['data:write']);
  const other = await createTestUser(service);
  const otherToken = await tokenFor(service, other, ['data:read']);
  for (const path of [LMM, `${LMM}?${YEAR}&after=10`, LDATA, LAWD, MODEL]) {
    const none = await get(service, undefined, path);
    t.is(none.status, 401, path);
    t.regex(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    t.is((await get(service, writeOnly, path)).status, 403, path);
  }
  for (const path of [LMM, `${LMM}?${YEAR}&after=10`, LDATA, LAWD]) {
    const answer = await getFrame(service, otherToken, path);
    t.is(answer.parquet.rows, 0, `${path}: nothing of the first user's`);
  }
  t.deepEqual((await api(service, otherToken, 'GET', `${MODEL}?date=2024-04-30`)).body, { curve: [], parameters: null, test: null });
});

// ---------------------------------------------------------------------------------------------
// Cache

test('cache: a change to the activities (upload, delete) shows in the next identical request; concurrent identical requests agree', async (t) => {
  const u = await createTestUser(service);
  const tok = await tokenFor(service, u, ['data:read', 'data:write']);
  const version = async () =>
    (await service.deps.db.selectFrom('users').select('data_version').where('id', '=', u.id).executeTakeFirstOrThrow()).data_version;
  const first = await uploadOne(
    u,
    tok,
    'C1',
    synthetic('cycling', undefined, '2024-06-01T08:00:00Z', 600, 0, () => ({ power: 200, heartRate: 120 })),
  );
  const path = `${LMM}?format=json`;
  const awdPath = `${LAWD}?format=json`;
  const before = await api(service, tok, 'GET', path);
  t.is(before.status, 200);
  t.is(before.body.power.length, 200);
  t.true(before.body.duration.every((d: number) => d === 600));
  const awdBefore = (await api(service, tok, 'GET', awdPath)).body;
  t.is(awdBefore.max[0], 600);
  const v1 = await version();

  const better = await uploadOne(
    u,
    tok,
    'C2',
    synthetic('cycling', undefined, '2024-06-02T08:00:00Z', 900, 0, () => ({ power: 300, heartRate: 120 })),
  );
  t.true(BigInt(await version()) > BigInt(v1), 'users.data_version is bumped by the upload');
  const after = await api(service, tok, 'GET', path);
  t.is(after.body.power.length, 300, 'the new activity shows at once');
  t.true(after.body.duration.every((d: number) => d === 900));
  t.true(after.body.activity_id.every((id: string) => id === better.id));
  t.deepEqual((await api(service, tok, 'GET', awdPath)).body.max.slice(-1), [900]);

  const v2 = await version();
  t.is((await api(service, tok, 'DELETE', `/api/v1/activities/${better.id}`)).status, 204);
  t.true(BigInt(await version()) > BigInt(v2), 'users.data_version is bumped by the delete');
  const gone = await api(service, tok, 'GET', path);
  t.deepEqual(gone.body, before.body, 'after the delete, the first activity again');
  t.true(gone.body.activity_id.every((id: string) => id === first.id));
  t.deepEqual((await api(service, tok, 'GET', awdPath)).body, awdBefore);
  const data = await api(service, tok, 'GET', `${LDATA}?format=json&metrics=power`);
  t.is(data.body.power.length, 600);

  // Five identical requests at once (not cached yet): the same body for all.
  const query = `${LMM}?start=2024-01-01&end=2024-12-31&after=0&after=20&by=intensity`;
  const answers = await Promise.all(Array.from({ length: 5 }, () => get(service, tok, query)));
  t.true(answers.every((r) => r.status === 200));
  const bodies = answers.map((r) => Buffer.from(r.bytes).toString('base64'));
  t.is(new Set(bodies).size, 1, 'identical bodies');
  const jsons = await Promise.all(Array.from({ length: 5 }, () => api(service, tok, 'GET', `${query}&format=json`)));
  t.true(jsons.every((r) => JSON.stringify(r.body) === JSON.stringify(jsons[0]!.body)));
  t.is(jsons[0]!.body.power.length, 200 + 200 - 0, 'after 0 and after 20 kJ: 200 levels each');
});

// ---------------------------------------------------------------------------------------------
// Curves recompute job

test('curves job: recomputes deleted activity_curves rows with the same bytes; a second run changes nothing', async (t) => {
  const u = await createTestUser(service);
  const tok = await tokenFor(service, u, ['data:read', 'data:write']);
  const a = await uploadOne(
    u,
    tok,
    'D1',
    synthetic('cycling', undefined, '2024-07-01T08:00:00Z', 400, 0, (i) => ({
      power: 100 + (i % 37) * 7,
      heartRate: 120 + (i % 11),
      speed: 5 + (i % 4) * 0.5,
    })),
  );
  const db = service.deps.db;
  const rows = () =>
    db
      .selectFrom('activity_curves')
      .select(['metric', 'version', 'encoding', 'level_duration', 'level_start', 'awd'])
      .where('activity_id', '=', a.id)
      .orderBy('metric')
      .execute();
  const original = await rows();
  t.deepEqual(
    original.map((r) => r.metric),
    ['heart_rate', 'power', 'speed'],
  );
  const lmm = await getFrame(service, tok, LMM);
  sameColumns(t, lmm.parquet.columns, expectedLevels([a], 'power'), 'before');

  await db.deleteFrom('activity_curves').where('activity_id', '=', a.id).execute();
  // The per-activity curve does not depend on the stored rows.
  const mm = await getFrame(service, tok, `/api/v1/activities/${a.id}/mean-max?durations=1,60,400`);
  const plain = plainMeanMax(series(a, 'power')!, [1, 60, 400]);
  t.deepEqual(mm.parquet.columns.power, Array.from(plain.best));

  await enqueueCurves(service.deps.queues, { userId: u.id });
  const back = await poll('recomputed curves', async () => {
    const r = await rows();
    return r.length === 3 ? r : undefined;
  });
  t.deepEqual(back, original, 'the same bytes as computed at ingestion');
  // The next request sees the recomputed curves (data_version bumped by the job).
  const again = await getFrame(service, tok, LMM);
  t.deepEqual(again.parquet.columns, lmm.parquet.columns);

  // A second run: nothing is missing, nothing changes.
  const jobId = await enqueueCurves(service.deps.queues, { userId: u.id });
  await poll('second curves job', async () => {
    const job = await service.deps.queues.curves.getJob(jobId);
    if (!job) return true; // completed and removed
    const state = await job.getState();
    if (state === 'failed') throw new Error(`curves job failed: ${job.failedReason}`);
    return state === 'completed';
  });
  t.deepEqual(await rows(), original);
  t.deepEqual((await getFrame(service, tok, LMM)).parquet.columns, lmm.parquet.columns);
});

// ---------------------------------------------------------------------------------------------
// Time limit

/** The `detail` of the first 503 of the time-limit test (checked by a test of its own). */
let resolveDetail: (detail: string) => void;
let rejectDetail: (error: Error) => void;
const timeoutDetail = new Promise<string>((resolve, reject) => {
  resolveDetail = resolve;
  rejectDetail = reject;
});
timeoutDetail.catch(() => undefined);

test('time limit: a computation over COMPUTE_TIMEOUT_MS answers 503 with Retry-After and a detail; the service recovers', async (t) => {
  // Three 6-hour rides of pseudo-random power: the curves after work, by intensity (every duration of every ride),
  // take several hundred ms here, against a 100 ms limit.
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const files = [0, 1, 2].map((k) => {
    const power = Array.from({ length: 21_600 }, () => Math.round(100 + 300 * random()));
    return {
      name: `long${k}.fit`,
      bytes: buildActivityFit({
        sessions: [
          {
            sport: 'cycling',
            start: new Date(Date.UTC(2024, 4, 1 + k, 6)),
            seconds: 21_600,
            record: (i) => ({ power: power[i], heartRate: 140 }),
          },
        ],
      }),
    };
  });
  const limited = await startTestService({ workers: true, env: { COMPUTE_TIMEOUT_MS: '100' } });
  try {
    const u = await createTestUser(limited);
    const tok = await tokenFor(limited, u, ['data:read', 'data:write']);
    const sources = await uploadAndWait(limited, tok, files);
    t.true(sources.every((s) => s.status === 'processed'));
    let detail = '';
    for (const query of ['after=0&after=10&after=20&after=30&after=40&by=intensity', 'after=1&by=intensity']) {
      const res = await get(limited, tok, `${LMM}?start=2024-01-01&end=2024-12-31&${query}`);
      t.is(res.status, 503, query);
      t.regex(res.headers.get('retry-after') ?? '', /^\d+$/, query);
      const body = jsonOf(res);
      t.is(typeof body.detail, 'string');
      t.true(body.detail.length > 0);
      detail ||= body.detail;
    }
    resolveDetail(detail);
    // The same request again is computed again (a timeout is not cached): 503 again, not a cached answer.
    t.is((await get(limited, tok, `${LMM}?start=2024-01-01&end=2024-12-31&after=1&by=intensity`)).status, 503);
    // Light requests still succeed.
    await poll(
      'a light request to succeed after the timeouts',
      async () => (await get(limited, tok, `${LMM}?format=json`)).status === 200,
      15_000,
    );
    const light = await api(limited, tok, 'GET', `${LMM}?format=json`);
    t.is(light.body.duration[0], 21_600);
  } finally {
    rejectDetail(new Error('the time-limit test ended without a 503'));
    await limited.close();
  }
});

test('the 503 detail states the time limit truthfully (COMPUTE_TIMEOUT_MS=100 is not "within 0 s")', async (t) => {
  const detail = await timeoutDetail;
  t.regex(detail, /did not finish/);
  t.notRegex(detail, /within 0 s/, detail);
});
