import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { sendComputed } from '../../activities/computed.ts';
import { NOT_MODIFIED, VALIDATOR_HEADERS } from '../../conditional.ts';
import { DateParam, durationsParam, MeanMaxMetricParam } from '../../../services/activities/curve-params.ts';
import { SportParam } from '../../../services/activities/query.ts';
import { firstDayOfWindow, todayUtc } from '../../../services/curves/range.ts';
import { modelTest, ModelTestOut } from '../../../services/curves/model-test.ts';
import { curvesOf, packStored } from '../../../../db/curves.ts';
import { allDurations } from '../../../../engine/curves/durations.ts';
import { LEVEL_STEP } from '../../../../engine/curves/levels.ts';
import { bestEfforts, fitCriticalPower, MODEL_WINDOW_DAYS, modelCurve } from '../../../../engine/curves/intensity-duration-model.ts';

const ModelOut = z.object({
  curve: z.array(z.object({ duration: z.number().int(), intensity: z.number() })),
  parameters: z
    .object({
      model: z.literal('3-parameter critical power'),
      metric: z.enum(['power', 'speed']),
      critical_intensity: z.number().meta({ description: 'Critical power (W) or critical speed (m/s)' }),
      work_capacity: z.number().meta({ description: "W' (J) for power, D' (m) for speed" }),
      max_intensity: z.number().meta({ description: 'Pmax (W) or the highest speed (m/s) of the model at t → 0' }),
      rmse: z.number().meta({ description: "Root-mean-square error of the fit over the efforts, in the metric's unit" }),
      efforts: z.number().int().meta({ description: 'Best-effort points the model was fitted to' }),
      start: z.string().meta({ description: 'First day of the window (local date)' }),
      end: z.string().meta({ description: 'Last day of the window (`date`)' }),
    })
    .nullable(),
  test: ModelTestOut,
});

export const intensityDurationModelRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/intensity-duration-model',
    operationId: 'intensity_duration_model',
    summary: 'A critical-power model of the best efforts of the last 90 days (in development)',
    description:
      'In development; may change. The envelope of the best efforts (the longest duration sustained at each intensity level over every activity of ' +
      `\`sport\` in the ${MODEL_WINDOW_DAYS} days up to and including \`date\`, default today) is fitted with the 3-parameter critical power model ` +
      "P(t) = (W'·Pmax + t·CP·(Pmax−CP)) / (W' + t·(Pmax−CP)) by least squares, on efforts of up to 30 minutes. `curve` gives the model at the " +
      '`index` durations (default: the duration grid of `durations=all` up to the longest effort). With too few efforts to fit, `curve` is empty and ' +
      '`parameters` null. `by` accepts only `intensity`. ' +
      "`test` is the user's newest lab test (of `sport` when given) started on or before `date` (its local day) whose results hold the metric's " +
      'critical value (`critical_power` with `w_prime` for power, `critical_speed` with `d_prime` for speed; a missing work capacity is null), ' +
      "or null. Its `newer_than_window` is true when the test's local start day is after the window's first day (`date` − 89 days, " +
      "`parameters.start` when fitted): the test is newer than the oldest efforts the model may use, so a client should prefer the lab's values " +
      'or compare them with the fit. The ETag covers the test: creating, replacing or deleting a test that changes `test` changes it.',
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      by: z.enum(['intensity']).default('intensity'),
      date: DateParam.optional().describe('The last day of the 90-day window, `YYYY-MM-DD`, inclusive; default today (UTC)'),
      index: durationsParam(
        'The durations (s) of the curve: comma-separated seconds, or `all` (every second to 180 s, then every 5 s to 600 s, 10 s to 1800 s, 30 s to 3600 s, 60 s beyond, up to the longest effort)',
        'all',
      ),
      metric: MeanMaxMetricParam.default('power'),
      sport: SportParam.optional(),
    }),
    responses: {
      200: { description: 'The model curve and its parameters', schema: ModelOut, headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const end = query.date ?? todayUtc(ctx.deps.now());
    const start = firstDayOfWindow(end, MODEL_WINDOW_DAYS);
    const filter = { fromDay: start, toDay: end, ...(query.sport ? { sports: [query.sport] } : {}) };
    // The test is read first and is part of the identity: the ETag and the cached body follow it (a test's change bumps no data version).
    const test = await modelTest(ctx.deps.db, ctx.state.principal!.userId, {
      metric: query.metric,
      windowStart: start,
      windowEnd: end,
      sport: query.sport,
    });
    await sendComputed(ctx, [filter, query.metric, String(query.index ?? ''), test], async (signal) => {
      const rows = await curvesOf(ctx.deps.db, ctx.state.principal!.userId, filter, query.metric, 'levels');
      const envelope = await ctx.deps.engine.pool.mergeLevels(
        { duration: packStored(rows, 'buffer'), start: packStored(rows, 'second') },
        signal,
      );
      const points = bestEfforts(envelope, LEVEL_STEP[query.metric]);
      const fit = fitCriticalPower(points.durations, points.values);
      const longest = envelope.duration.length ? envelope.duration[0]! : 0;
      const index = query.index === 'all' || query.index === undefined ? allDurations(longest) : query.index;
      const model = fit
        ? {
            curve: [...modelCurve(fit, index)].map((intensity, i) => ({ duration: index[i]!, intensity })),
            parameters: {
              model: '3-parameter critical power' as const,
              metric: query.metric,
              critical_intensity: fit.cp,
              work_capacity: fit.wPrime,
              max_intensity: fit.pmax,
              rmse: fit.rmse,
              efforts: fit.points,
              start,
              end,
            },
          }
        : { curve: [], parameters: null };
      return { body: Buffer.from(JSON.stringify({ ...model, test })), type: 'application/json; charset=utf-8' };
    });
  },
);
