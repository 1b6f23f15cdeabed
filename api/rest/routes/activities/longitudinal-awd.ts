import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { AwdMetricParam, FormatParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { queryArray, SportParam } from '../../../services/activities/query.ts';
import { rangeFilter, RangeQuery, resolveRange } from '../../../services/curves/range.ts';
import { DEPRECATION_HEADERS, deprecationHeaders } from '../../activities/deprecation.ts';
import { descending, descendingLevels } from '../../../../engine/frames/curve-frames.ts';
import { curvesOf, packStored } from '../../../../db/curves.ts';
import { LEVEL_STEP } from '../../../../engine/curves/levels.ts';
import { rootSport } from '../../../../lib/sports.ts';

/** docs/api-clients.md, "Curves and time series": hard, medium and easy are the 90th, 75th and 50th percentiles of the daily values. */
const QUANTILES = { hard: 0.9, medium: 0.75, easy: 0.5 } as const;

export const longitudinalAwdRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/longitudinal-accumulated-work-duration',
    operationId: 'longitudinal_accumulated_work_duration',
    summary: 'Daily time at or above each intensity level over a range (in development)',
    description:
      "In development; may change. Each training day in the range (local date of an activity's start, activities of the `sport`s) has, per " +
      'intensity level, the seconds spent at or above it that day. One row per level, highest first: the level (DOUBLE, named after the metric), ' +
      '`max` (INT32, the highest daily value), and `hard`, `medium`, `easy` (DOUBLE: the 90th, 75th and 50th percentiles of the daily values over ' +
      'the days with training, linear interpolation). `metric` defaults to power when every `sport` is cycling (or none is given), else speed. ' +
      '`format=json` gives column-oriented JSON. Without `start` the range is the whole history up to `end`; `date`/`window_days` are deprecated.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      ...RangeQuery,
      sport: queryArray(SportParam).optional().describe('Sports to include, each with its sub-sports'),
      metric: AwdMetricParam.optional(),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('Longitudinal accumulated work duration', DEPRECATION_HEADERS), 304: NOT_MODIFIED },
  },
  async (ctx, { query }) => {
    const sports = query.sport ?? [];
    const metric = query.metric ?? (sports.every((s) => rootSport(s) === 'cycling') ? 'power' : 'speed');
    const range = resolveRange(query, ctx.deps.now());
    const filter = { ...rangeFilter(range), sports };
    const json = jsonRequested(ctx, query.format);
    await sendComputed(ctx, [filter, metric, json, range.deprecated], async (signal) => {
      const rows = await curvesOf(ctx.deps.db, ctx.state.principal!.userId, filter, metric, 'awd');
      // Days are the local dates of the activities' starts (whole days since the epoch, in local time).
      const day = Int32Array.from(rows, (r) => Math.floor((r.start + r.utcOffsetSeconds * 1000) / 86_400_000));
      const quantiles = Float64Array.from(Object.values(QUANTILES));
      const p = await ctx.deps.engine.pool.dailyAwd({ awd: packStored(rows, 'buffer'), day, quantiles }, signal);
      const step = LEVEL_STEP[metric];
      return encodeFrame(
        ctx.deps,
        {
          columns: [
            { name: metric, type: 'double', values: descendingLevels(p.max.length, step) },
            { name: 'max', type: 'int32', values: descending(p.max) },
            ...Object.keys(QUANTILES).map((name, j) => ({ name, type: 'double' as const, values: descending(p.quantiles[j]!) })),
          ],
        },
        json,
        deprecationHeaders(range.deprecated),
        signal,
      );
    });
  },
);
