import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { DateParam, FormatParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { queryArray, SportParam } from '../../../services/activities/query.ts';
import { MAX_CHART_DAYS, trainingLoadColumns } from '../../../services/training-load/chart.ts';
import { todayUtc } from '../../../services/curves/range.ts';
import { UnprocessableEntity } from '../../../services/errors.ts';

export const longitudinalTrainingLoadRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/longitudinal-training-load',
    operationId: 'longitudinal_training_load',
    summary: 'The performance management chart: daily stress, chronic and acute load, their balance',
    description:
      'One row per day from `start` to `end` (dates, inclusive; `end` defaults to today (UTC), `start` to the first day with training stress), ' +
      "days without training included: `date` (TIMESTAMP, the local day at 00:00), `stress` (the day's summed training stress of the activities of " +
      "the `sport`s, each on the local day of its start), `ctl` (chronic training load: ctl = stress·(1 − e^(−1/42)) + yesterday's ctl·e^(−1/42)), " +
      "`atl` (acute: the same with 7 days), `tsb` (the balance as GoldenCheetah shows it: yesterday's ctl − atl, so a day's training shows in " +
      "the next day's form) and `ramp_rate` (ctl − ctl 7 days before); all DOUBLE. The loads start at 0 before the athlete's first training " +
      'day, so a range carries all earlier training. Activities without a score (no threshold) count as 0. Parquet by default, column-oriented ' +
      'JSON with `format=json`. At most 36,600 days per request.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: DateParam.optional().describe('First day (YYYY-MM-DD)'),
      end: DateParam.optional().describe('Last day (YYYY-MM-DD); default today (UTC)'),
      sport: queryArray(SportParam).optional().describe('Sports to include, each with its sub-sports; default all'),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('The chart, a row per day'), 304: NOT_MODIFIED },
  },
  async (ctx, { query }) => {
    const end = query.end ?? todayUtc(ctx.deps.now());
    if (query.start !== undefined && query.start > end)
      throw new UnprocessableEntity([
        { loc: ['query', 'start'], msg: `start (${query.start}) is after end (${end})`, type: 'value_error.range' },
      ]);
    if (query.start !== undefined && (Date.parse(end) - Date.parse(query.start)) / 86_400_000 + 1 > MAX_CHART_DAYS)
      throw new UnprocessableEntity([
        { loc: ['query', 'start'], msg: `At most ${MAX_CHART_DAYS} days per request`, type: 'value_error.range' },
      ]);
    const json = jsonRequested(ctx, query.format);
    const sports = query.sport?.length ? query.sport : undefined;
    await sendComputed(ctx, [query.start ?? null, end, sports ?? null, json], async (signal) => {
      const columns = await trainingLoadColumns(ctx.deps.db, ctx.state.principal!.userId, sports, query.start, end);
      return encodeFrame(ctx.deps, { columns }, json, undefined, signal);
    });
  },
);
