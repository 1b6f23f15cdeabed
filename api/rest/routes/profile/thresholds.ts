import { defineRoute } from '../../../http/route.ts';
import { ThresholdsBody, ThresholdsOut } from '../../../services/training-load/model.ts';
import { recomputeLoad } from '../../../services/training-load/recompute.ts';
import { declaredThresholds, replaceThresholds, testEntries } from '../../../../db/training-load.ts';
import { THRESHOLD_FIELDS, type ThresholdEntry } from '../../../../engine/load/thresholds.ts';
import type { Ctx } from '../../../http/context.ts';

const DESCRIPTION =
  'Thresholds with a history, per sport: critical power and W′ (cycling, or running with power), critical speed or threshold pace as a speed ' +
  '(running, swimming), threshold, maximum and resting heart rate. An entry holds for its sport and sub-sports from `valid_from` (a local ' +
  'day) until the next entry of that sport; a value an entry leaves out keeps the earlier value. Lab tests whose results hold such values ' +
  "count as entries too (`from_tests`), from the test's day; on the same day the more specific sport wins, then a declared entry over a test's. " +
  'An activity uses the values that hold on its local day: its training stress, time in zones and W′ balance (docs/training-load.md).';

async function thresholdsOut(ctx: Ctx) {
  const userId = ctx.state.principal!.userId;
  const entry = (e: Partial<ThresholdEntry> & { sport: string; valid_from: string }, origin: 'declared' | 'test') => ({
    sport: e.sport,
    valid_from: e.valid_from,
    origin,
    test_id: e.test_id ?? null,
    ...Object.fromEntries(THRESHOLD_FIELDS.map((f) => [f, e[f] ?? null])),
  });
  const tests = (await testEntries(ctx.deps.db, userId)).sort((a, b) =>
    a.sport === b.sport ? (a.valid_from < b.valid_from ? -1 : 1) : a.sport < b.sport ? -1 : 1,
  );
  return {
    thresholds: (await declaredThresholds(ctx.deps.db, userId)).map((e) => entry(e, 'declared')),
    from_tests: tests.map((e) => entry(e, 'test')),
  } as ReturnType<typeof ThresholdsOut.parse>;
}

export const getThresholdsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/thresholds',
    operationId: 'get_thresholds',
    summary: "The athlete's thresholds, with their history",
    description: DESCRIPTION,
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    responses: { 200: { description: 'The declared history and the entries from lab tests', schema: ThresholdsOut } },
  },
  async (ctx) => {
    ctx.body = await thresholdsOut(ctx);
  },
);

export const putThresholdsRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/profile/thresholds',
    operationId: 'put_thresholds',
    summary: "Replace the athlete's declared thresholds",
    description:
      `${DESCRIPTION} The body is the whole declared history. Two entries of one sport on one day overlap: a 422 naming the second's ` +
      '`valid_from`; so is a value out of its range, a day after tomorrow, or an entry without a value. Only the activities of the sports whose ' +
      'history changed, from the first changed day on, are computed again (in the background: their `training_stress` is null meanwhile).',
    tags: ['profile'],
    auth: { scopes: ['data:write'] },
    body: ThresholdsBody,
    responses: { 200: { description: 'The stored history', schema: ThresholdsOut } },
  },
  async (ctx, { body }) => {
    const userId = ctx.state.principal!.userId;
    const entries = body.thresholds.map(({ origin: _origin, ...e }) => e);
    const { stale } = await replaceThresholds(ctx.deps.db, userId, entries);
    if (stale) await recomputeLoad(ctx.deps, userId);
    ctx.body = await thresholdsOut(ctx);
  },
);
