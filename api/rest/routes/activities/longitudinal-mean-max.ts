import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { UnprocessableEntity, type ValidationItem } from '../../../services/errors.ts';
import { AfterParam, afterBeyondMax, DurationsParam, FormatParam, MeanMaxMetricParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { afterWorkCurve, storedLevelCurve } from '../../../services/curves/longitudinal-mean-max.ts';
import { queryArray, SportParam } from '../../../services/activities/query.ts';
import { rangeDays, rangeFilter, RangeQuery, resolveRange, YEAR_DAYS } from '../../../services/curves/range.ts';
import { DEPRECATION_HEADERS, deprecationHeaders } from '../../activities/deprecation.ts';

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
      'value-indexed rows. The range is capped at one year (366 days); without `start` it is the year up to `end`. Computed from the samples of ' +
      "the range only (read from the user's channel columns on disk, never the whole history), exactly. Power by duration with every `after` a " +
      'multiple of 250 kJ up to 10,000 and only default durations (the usual fatigue states) is merged from per-ride fatigue grids stored at ' +
      'ingestion instead: the same values, starts and activities, a few milliseconds for a year of rides; other `after` values at default durations ' +
      'read the samples of only the rides those grids cannot rule out.\n' +
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
      by: z
        .enum(['duration', 'intensity'])
        .optional()
        .describe('Axis of the curve: default `duration` with `after` and metric=power, else `intensity`'),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('The longitudinal curve', DEPRECATION_HEADERS), 304: NOT_MODIFIED },
  },
  async (ctx, { query }) => {
    const metric = query.metric;
    const after = query.after?.length ? query.after : undefined;
    const by = query.by ?? (after && metric === 'power' ? 'duration' : 'intensity');
    const problems: ValidationItem[] = [];
    if (by === 'duration' && !after) problems.push({ loc: ['query', 'by'], msg: 'by=duration requires after', type: 'value_error.by' });
    if (by === 'duration' && metric !== 'power')
      problems.push({
        loc: ['query', 'by'],
        msg: 'by=duration requires metric=power (by=intensity is the only orientation for speed)',
        type: 'value_error.by',
      });
    const tooLarge = after && afterBeyondMax(after, metric);
    if (tooLarge) problems.push(tooLarge);
    const range = resolveRange(query, ctx.deps.now(), { defaultYear: after !== undefined });
    if (after && rangeDays(range) > YEAR_DAYS) {
      problems.push({
        loc: ['query', 'start'],
        msg: `With after the range is at most one year (${YEAR_DAYS} days)`,
        type: 'value_error.range',
      });
    }
    if (problems.length) throw new UnprocessableEntity(problems);
    const headers = deprecationHeaders(range.deprecated || (query.by === 'intensity' && metric === 'power'));
    const json = jsonRequested(ctx, query.format);
    const filter = { ...rangeFilter(range), sports: query.sport };
    const identity = [filter, metric, after ?? null, by, by === 'duration' ? String(query.durations ?? '') : null, json, headers ?? null];
    await sendComputed(ctx, identity, async (signal) => {
      const userId = ctx.state.principal!.userId;
      const frame = after
        ? await afterWorkCurve(ctx.deps, userId, filter, { metric, after, by, durations: query.durations }, signal)
        : await storedLevelCurve(ctx.deps, userId, filter, metric, signal);
      return encodeFrame(ctx.deps, frame, json, headers, signal);
    });
  },
);
