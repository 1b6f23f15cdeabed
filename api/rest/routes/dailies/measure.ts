import { recomputeLoad } from '../../../services/training-load/recompute.ts';
import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { NotFound } from '../../../services/errors.ts';
import { queryBoolean } from '../../../services/activities/query.ts';
import { todayUtc } from '../../../services/curves/range.ts';
import {
  checkDailyValue,
  DailyCreate,
  dailyRange,
  DailyParams,
  DailyResponse,
  dailySeries,
  DayParam,
  DEFAULT_RANGE_DAYS,
  MAX_RANGE_DAYS,
  MEASURE_TABLE,
  type DailyOut,
} from '../../../services/dailies/model.ts';
import { dailiesBetween, deleteDaily, upsertDaily } from '../../../../db/dailies.ts';
import { NOT_MODIFIED, sendTaggedJson, VALIDATOR_HEADERS } from '../../conditional.ts';

export const upsertDailyRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/dailies/{measure}',
    operationId: 'upsert_daily',
    summary: 'Store the value of a daily measure on a date (upsert)',
    description:
      'Stores `value` for `measure` on `date` (`YYYY-MM-DD`), replacing any value already stored for that measure and date (an upsert), and ' +
      'answers **200** with it: `{date, value, status: "stored", source: "manual"}`. `value` is a number in the measure\'s unit and must lie ' +
      `within its range, inclusive (${MEASURE_TABLE}); outside it the answer is 422 on \`["body","value"]\` naming the range. An unknown measure is 422 ` +
      'on `["path","measure"]`; an invalid date 422 on `["body","date"]`. Needs `data:write` (enough on its own: no `data:read`).',
    tags: ['dailies'],
    auth: { scopes: ['data:write'] },
    params: DailyParams,
    body: DailyCreate,
    responses: { 200: { description: 'The stored value', schema: DailyResponse } },
  },
  async (ctx, { params, body }) => {
    const outOfRange = checkDailyValue(params.measure, body.value);
    if (outOfRange) throw outOfRange;
    const row = await upsertDaily(
      ctx.deps.db,
      { user_id: ctx.state.principal!.userId, measure: params.measure, day: body.date, value: body.value, source: 'manual' },
      ctx.deps.now(),
    );
    if (params.measure === 'resting_hr') await recomputeLoad(ctx.deps, ctx.state.principal!.userId);
    const out: DailyOut = { date: row.day, value: row.value, status: 'stored', source: 'manual' };
    ctx.body = out;
  },
);

export const getDailiesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/dailies/{measure}',
    operationId: 'get_dailies',
    summary: 'A daily measure for every day of a date range',
    description:
      'One element per calendar day from `start` to `end` (`YYYY-MM-DD`, both inclusive), **oldest first**. Defaults: `end` is today (UTC ' +
      `date) and \`start\` is \`end\` − ${DEFAULT_RANGE_DAYS - 1} days (the last ${DEFAULT_RANGE_DAYS} days); with only \`start\`, \`end\` is today; with only ` +
      `\`end\`, the ${DEFAULT_RANGE_DAYS} days up to it. \`start\` after \`end\`, or a range of more than ${MAX_RANGE_DAYS} days, is 422 on ` +
      '`["query","start"]`. A day with a stored value is `{date, value, status: "stored", source}`; any other day is ' +
      '`{date, value: null, status: "missing", source: null}`. With `interpolate=true`, a day without a value that lies strictly between two ' +
      'stored values — the nearest stored value before it and the nearest after it, either of which may lie outside the requested range — ' +
      'gets the linear estimate between those two (`status: "estimated"`, `source: null`); days before the first or after the last stored ' +
      'value of the measure stay missing. Estimates are computed on reading, never stored. The answer carries a strong `ETag` (a hash of the body) ' +
      'and `Cache-Control: private, no-cache`: a request whose `If-None-Match` names it is answered 304 without a body.',
    tags: ['dailies'],
    auth: { scopes: ['data:read'] },
    params: DailyParams,
    query: z.object({
      start: DayParam.optional().describe(`The first day, \`YYYY-MM-DD\`; default \`end\` − ${DEFAULT_RANGE_DAYS - 1} days`),
      end: DayParam.optional().describe('The last day, `YYYY-MM-DD`, inclusive; default today (UTC)'),
      interpolate: queryBoolean(false).describe('`true` (or `1`): estimate days between two stored values linearly; default `false`'),
    }),
    responses: {
      200: { description: 'One element per day of the range, oldest first', schema: z.array(DailyResponse), headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { params, query }) => {
    const { start, end } = dailyRange(query, todayUtc(ctx.deps.now()));
    const stored = await dailiesBetween(ctx.deps.db, ctx.state.principal!.userId, params.measure, start, end, {
      neighbours: query.interpolate,
    });
    sendTaggedJson(ctx, dailySeries(start, end, stored, query.interpolate));
  },
);

export const deleteDailyRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/dailies/{measure}',
    operationId: 'delete_daily',
    summary: 'Delete the value of a daily measure on a date',
    description:
      'Removes the value stored for `measure` on `date` (`YYYY-MM-DD`, required; missing or invalid: 422 on `["query","date"]`) → 204. ' +
      '404 when no value of this measure is stored on that date for the caller (estimates are never stored, so they cannot be deleted). ' +
      'Needs `data:write`.',
    tags: ['dailies'],
    auth: { scopes: ['data:write'] },
    params: DailyParams,
    query: z.object({ date: DayParam.describe('The date whose value to delete, `YYYY-MM-DD`') }),
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No value stored for that measure and date' } },
  },
  async (ctx, { params, query }) => {
    const removed = await deleteDaily(ctx.deps.db, ctx.state.principal!.userId, params.measure, query.date);
    if (!removed) throw new NotFound(`No ${params.measure} value is stored for ${query.date}`);
    if (params.measure === 'resting_hr') await recomputeLoad(ctx.deps, ctx.state.principal!.userId);
    ctx.status = 204;
  },
);
