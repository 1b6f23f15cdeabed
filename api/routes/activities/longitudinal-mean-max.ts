import { z } from 'zod';
import type { Ctx } from '../../context.ts';
import { defineRoute } from '../../route.ts';
import { UnprocessableEntity, type ValidationItem } from '../../errors.ts';
import { AfterParam, DurationsParam, durationsFor, FormatParam, MeanMaxMetricParam } from '../../activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { activityColumns } from '../../activities/activity-columns.ts';
import { queryArray, SportParam } from '../../activities/query.ts';
import { rangeDays, rangeFilter, RangeQuery, resolveRange, YEAR_DAYS } from '../../activities/range.ts';
import { DEPRECATION_HEADERS, deprecationHeaders } from '../../activities/deprecation.ts';
import { activitiesForScan } from '../../../db/activities.ts';
import { curvesOf, packInt32 } from '../../../db/curves.ts';
import type { MeanMaxMetric } from '../../../engine/curves/activity-curves.ts';
import type { Frame, FrameColumn } from '../../../engine/frames/frame.ts';
import { LEVEL_STEP, levelValue } from '../../../engine/curves/levels.ts';
import { mergeChunks, type AfterOutput, type DurationCurve, type LevelCurve } from '../../../engine/curves/longitudinal.ts';
import { readChannelOfMany } from '../../../engine/samples/sample-scan.ts';
import { samplePath } from '../../../lib/storage.ts';

export const longitudinalMeanMaxRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/longitudinal-mean-max',
    operationId: 'longitudinal_mean_max',
    summary: 'The best mean-max curve over all matching activities',
    description:
      'The best sustained efforts of every activity of the `sport`s in the range, with the activity each comes from. Parquet (zstd) by default; ' +
      'column-oriented JSON with `format=json` or `Accept: application/json`.\n\n' +
      '- Without `after` the curve is value-indexed: one row per intensity level (1 W, or 0.01 m/s), ascending, with the longest `duration` sustained ' +
      'at or above it, the `start` of that window, its `activity_id` and `sport`. The metric column is the index: the Parquet file carries pandas ' +
      'metadata, so `pandas.read_parquet` restores it as the DataFrame index. Computed from curves stored at ingestion (one read).\n' +
      '- With `after` (at most 5 values: accumulated work in kJ for power, distance in metres for speed) each activity counts only from the moment ' +
      'its work first reaches the value; the frame is index-free with an `after` column. `by=duration` (the default for power with `after`) gives ' +
      '`duration`, the metric, `start`, `activity_id`, `sport`, `after` at `durations` (default 1, 2, 5, … 21600 s); `by=intensity` gives the ' +
      'value-indexed rows. The range is capped at one year (366 days); without `start` it is the year up to `end`.\n' +
      '- `by=duration` requires `after` and metric=power. `by=intensity` is deprecated for power (answered with a `Deprecation` header), and is ' +
      'the only orientation for speed.\n' +
      '- Without `start`, the range is the whole history up to `end` (default today, UTC). `date`/`window_days` are deprecated (`Deprecation` header).',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      sport: queryArray(SportParam).optional().describe('Sports to include, each with its sub-sports'),
      metric: MeanMaxMetricParam.default('power'),
      ...RangeQuery,
      durations: DurationsParam,
      after: AfterParam,
      by: z.enum(['duration', 'intensity']).optional().describe('Axis of the curve: default `duration` with `after` and metric=power, else `intensity`'),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('The longitudinal curve', DEPRECATION_HEADERS) },
  },
  async (ctx, { query }) => {
    const metric = query.metric;
    const after = query.after?.length ? query.after : undefined;
    const by = query.by ?? (after && metric === 'power' ? 'duration' : 'intensity');
    const problems: ValidationItem[] = [];
    if (by === 'duration' && !after) problems.push({ loc: ['query', 'by'], msg: 'by=duration requires after', type: 'value_error.by' });
    if (by === 'duration' && metric !== 'power') problems.push({ loc: ['query', 'by'], msg: 'by=duration requires metric=power (by=intensity is the only orientation for speed)', type: 'value_error.by' });
    const range = resolveRange(query, ctx.deps.now(), { defaultYear: after !== undefined });
    if (after && rangeDays(range) > YEAR_DAYS) {
      problems.push({ loc: ['query', 'start'], msg: `With after the range is at most one year (${YEAR_DAYS} days)`, type: 'value_error.range' });
    }
    if (problems.length) throw new UnprocessableEntity(problems);
    const headers = deprecationHeaders(range.deprecated || (query.by === 'intensity' && metric === 'power'));
    const json = jsonRequested(ctx, query.format);
    const filter = { ...rangeFilter(range), sports: query.sport };
    const identity = [filter, metric, after ?? null, by, by === 'duration' ? String(query.durations ?? '') : null, json, headers ?? null];
    await sendComputed(ctx, identity, async (signal) => {
      const frame = after
        ? await afterCurve(ctx, filter, metric, after, by, query.durations, signal)
        : await storedCurve(ctx, filter, metric, signal);
      return encodeFrame(ctx.deps, frame, json, headers);
    });
  },
);

type Filter = Parameters<typeof activitiesForScan>[2];

/** Value-indexed, from the curves stored at ingestion. */
async function storedCurve(ctx: Ctx, filter: Filter, metric: MeanMaxMetric, signal: AbortSignal): Promise<Frame> {
  const rows = await curvesOf(ctx.deps.db, ctx.state.principal!.userId, filter, metric, 'levels');
  const duration = packInt32(rows.map((r) => r.buffer));
  const start = packInt32(rows.map((r) => r.second!));
  const curve = await ctx.deps.engine.pool.run({ task: 'merge-levels', duration, start }, signal);
  return levelFrame(metric, [curve], rows, null);
}

interface Owned {
  id: string;
  sport: string;
  start: number;
}

/** Rows of value-indexed curves (one per `after` value, or one without): level, duration, start, activity, sport[, after]. */
function levelFrame(metric: MeanMaxMetric, curves: LevelCurve[], owners: Owned[], after: number[] | null): Frame {
  const step = LEVEL_STEP[metric];
  const rows = curves.reduce((n, c) => n + c.owner.filter((o) => o >= 0).length, 0);
  const level = new Float64Array(rows);
  const duration = new Int32Array(rows);
  const start = new Float64Array(rows);
  const owner = new Int32Array(rows);
  const afterValues = new Float64Array(rows);
  let r = 0;
  curves.forEach((c, j) => {
    for (let k = 0; k < c.duration.length; k++) {
      const o = c.owner[k]!;
      if (o < 0) continue;
      level[r] = levelValue(k + 1, step);
      duration[r] = c.duration[k]!;
      start[r] = owners[o]!.start + c.start[k]! * 1000;
      owner[r] = o;
      afterValues[r] = after ? after[j]! : 0;
      r++;
    }
  });
  const columns: FrameColumn[] = [
    { name: metric, type: 'double', values: level },
    { name: 'duration', type: 'int32', values: duration },
    { name: 'start', type: 'timestamptz', values: start },
    ...activityColumns(owner, owners),
  ];
  if (after) columns.push({ name: 'after', type: 'double', values: afterValues });
  return after ? { columns } : { columns, index: [metric] };
}


/** Curves after accumulated work, from the samples: every activity's channel in one DuckDB scan, the kernels in the pool. */
async function afterCurve(
  ctx: Ctx,
  filter: Filter,
  metric: MeanMaxMetric,
  after: number[],
  by: 'duration' | 'intensity',
  askedDurations: Int32Array | 'all' | undefined,
  signal: AbortSignal,
): Promise<Frame> {
  const { db, config, engine } = ctx.deps;
  const activities = await activitiesForScan(db, ctx.state.principal!.userId, filter, metric);
  const owners: Owned[] = activities.map((a) => ({ id: a.id, sport: a.sport, start: a.start_time.getTime() }));
  const longest = activities.reduce((n, a) => Math.max(n, a.samples), 0);
  const durations = by === 'duration' ? durationsFor(askedDurations, longest) : null;
  // The kernels take ascending thresholds; rows come out in the order asked.
  const order = [...new Set(after)].sort((a, b) => a - b);
  const thresholds = Float64Array.from(order, (x) => (metric === 'power' ? x * 1000 : x));
  let output: AfterOutput = by === 'duration' ? { kind: 'duration', curves: [] } : { kind: 'intensity', curves: [] };
  if (activities.length && (durations === null || durations.length)) {
    const paths = activities.map((a) => samplePath(config.DATA_DIR, a.user_id, a.id));
    const samples = await readChannelOfMany(engine.samples, paths, activities.map((a) => a.samples), metric, signal);
    const chunks = chunkBySamples(samples.offsets, engine.pool.maxThreads);
    const outputs = await Promise.all(
      chunks.map(([from, to]) =>
        engine.pool.run(
          {
            task: 'after',
            samples: { values: samples.values.slice(samples.offsets[from]!, samples.offsets[to]!), offsets: samples.offsets.slice(from, to + 1).map((o) => o - samples.offsets[from]!) },
            thresholds: thresholds.slice(),
            durations: durations ? durations.slice() : null,
            step: LEVEL_STEP[metric],
          },
          signal,
        ),
      ),
    );
    output = mergeChunks(outputs, chunks.map(([from]) => from));
  }
  const asked = after.map((x) => order.indexOf(x));
  if (output.kind === 'intensity') {
    return levelFrame(metric, asked.map((j) => output.curves[j] ?? { duration: new Int32Array(0), start: new Int32Array(0), owner: new Int32Array(0) }), owners, after);
  }
  return durationFrame(metric, durations ?? new Int32Array(0), asked.map((j) => output.curves[j]), owners, after);
}

/** Rows of duration-indexed curves, one block per `after` value: duration, metric, start, activity, sport, after. */
function durationFrame(metric: MeanMaxMetric, durations: Int32Array, curves: (DurationCurve | undefined)[], owners: Owned[], after: number[]): Frame {
  const rows: { d: number; v: number; s: number; o: number; a: number }[] = [];
  curves.forEach((c, j) => {
    if (!c) return;
    for (let k = 0; k < durations.length; k++) {
      const o = c.owner[k]!;
      if (o < 0) continue;
      rows.push({ d: durations[k]!, v: c.best[k]!, s: owners[o]!.start + c.start[k]! * 1000, o, a: after[j]! });
    }
  });
  return {
    columns: [
      { name: 'duration', type: 'int32', values: Int32Array.from(rows, (r) => r.d) },
      { name: metric, type: 'double', values: Float64Array.from(rows, (r) => r.v) },
      { name: 'start', type: 'timestamptz', values: Float64Array.from(rows, (r) => r.s) },
      ...activityColumns(Int32Array.from(rows, (r) => r.o), owners),
      { name: 'after', type: 'double', values: Float64Array.from(rows, (r) => r.a) },
    ],
  };
}

/** Split activities [0, m) into at most `parts` consecutive chunks of about equal samples. */
function chunkBySamples(offsets: Int32Array, parts: number): [number, number][] {
  const m = offsets.length - 1;
  const total = offsets[m]!;
  const chunks: [number, number][] = [];
  let from = 0;
  for (let p = 1; p <= parts && from < m; p++) {
    let to = from + 1;
    const target = (total * p) / parts;
    while (to < m && (p === parts || offsets[to]! < target)) to++;
    chunks.push([from, to]);
    from = to;
  }
  return chunks;
}
