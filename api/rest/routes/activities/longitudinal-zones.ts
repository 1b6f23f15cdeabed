import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { DateParam, FormatParam } from '../../../services/activities/curve-params.ts';
import { encodeFrame, jsonRequested, sendComputed } from '../../activities/computed.ts';
import { frameResponse } from '../../activities/frame-docs.ts';
import { NOT_MODIFIED } from '../../conditional.ts';
import { queryArray, SportParam } from '../../../services/activities/query.ts';
import { firstDayOfWindow, todayUtc } from '../../../services/curves/range.ts';
import { UnprocessableEntity } from '../../../services/errors.ts';
import { zoneTotals } from '../../../services/training-load/zone-totals.ts';

export const longitudinalZonesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/longitudinal-zones',
    operationId: 'longitudinal_zones',
    summary: 'Time in each zone over a range of days',
    description:
      'The seconds in each zone summed over the activities of the `sport`s whose local start day lies in [`start`, `end`] (default: the 90 days up ' +
      'to today, UTC), each activity in the zones that held on its day (its `time_in_zones`). One row per metric and zone: `metric` (power, ' +
      "heart_rate, speed), `zone` (INT32, 1 = the lowest), `name` (the zone's name; where an athlete's models changed within the range, the newest " +
      'name), `seconds` (DOUBLE) and `activities` (INT32, how many activities had that metric in zones). Parquet by default, JSON with `format=json`.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: DateParam.optional().describe('First day (YYYY-MM-DD); default 89 days before `end`'),
      end: DateParam.optional().describe('Last day (YYYY-MM-DD); default today (UTC)'),
      sport: queryArray(SportParam).optional().describe('Sports to include, each with its sub-sports; default all'),
      format: FormatParam,
    }),
    responses: { 200: frameResponse('Seconds per metric and zone'), 304: NOT_MODIFIED },
  },
  async (ctx, { query }) => {
    const end = query.end ?? todayUtc(ctx.deps.now());
    const start = query.start ?? firstDayOfWindow(end, 90);
    if (start > end)
      throw new UnprocessableEntity([
        { loc: ['query', 'start'], msg: `start (${start}) is after end (${end})`, type: 'value_error.range' },
      ]);
    const json = jsonRequested(ctx, query.format);
    const sports = query.sport?.length ? query.sport : undefined;
    await sendComputed(ctx, [start, end, sports ?? null, json], async (signal) => {
      const columns = await zoneTotals(ctx.deps.db, ctx.state.principal!.userId, start, end, sports);
      return encodeFrame(ctx.deps, { columns }, json, undefined, signal);
    });
  },
);
