import { recomputeLoad } from '../../../services/training-load/recompute.ts';
import { defineRoute } from '../../../http/route.ts';
import { withTimeout } from '../../activities/computed.ts';
import { TestSummary, testSummaryOut } from '../../../services/resources/tests.ts';
import { AnalysisAccept, AnalysisQuery, TestAnalysis } from '../../../services/tests/analysis-model.ts';
import { analyseTest, MAX_ANALYSED_ACTIVITIES, MAX_ANALYSED_TRACES, MAX_LACTATE_STEPS } from '../../../services/tests/analysis.ts';
import { acceptedResults } from '../../../services/tests/accept.ts';
import { NotFound } from '../../../services/errors.ts';
import { appMetadataOf } from '../../../../db/app-metadata.ts';
import { mergeTestResults } from '../../../../db/tests.ts';
import { ownTest, TestParams } from './test.ts';

const DESCRIPTION =
  "Every established method that applies to the test's traces (`traces=auto`) and the activities it overlaps, each with its value or the reason it " +
  'does not apply. **Steps** (lactate step test): the traces with lactate, in time order, at power (cycling; other sports with power) or speed ' +
  '(running, walking, swimming; other sports without power) on the trace itself; each step at a higher intensity than the last, a later sample at the ' +
  'same intensity replacing the earlier, a first sample at intensity 0 the resting sample, lower intensities (recovery) left out and listed in ' +
  `\`ignored\`. At most ${MAX_LACTATE_STEPS} steps and ${MAX_ANALYSED_TRACES} traces. **Lactate methods** as the R package lactater defines them ` +
  '(Log-log, OBLA 2.0–4.0, Bsln + 0.5–1.5, Dmax, ModDmax, Exp-Dmax, Log-Poly-ModDmax, Log-Exp-ModDmax, LTP1, LTP2, LTratio). **Efforts**: with ' +
  "`durations`, the test's best mean at each; otherwise each lap of 60 s to 30 min whose mean is at least 90% of the test's best mean over that " +
  `duration, read from the recordings of at most ${MAX_ANALYSED_ACTIVITIES} activities inside the test's window. **Critical power or speed** from ` +
  'the efforts by the four models of the R package cyclingtools (3-parameter, 2-parameter hyperbolic, linear work-time, linear 1/time) with ' +
  'standard errors. **Maxima**: heart_rate_max is the highest 30-s mean heart rate of the recordings (else the highest trace heart rate); vo2max ' +
  'the highest vo2 of the traces.';

export const testAnalysisRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/tests/{test_id}/analysis',
    operationId: 'test_analysis',
    summary: "Thresholds, critical power and maxima computed from a test's measurements",
    description: DESCRIPTION,
    tags: ['tests'],
    auth: { scopes: ['data:read'] },
    params: TestParams,
    query: AnalysisQuery,
    responses: { 200: { description: 'The analysis', schema: TestAnalysis }, 404: { description: 'No such test of this user' } },
  },
  async (ctx, { params, query }) => {
    const test = await ownTest(ctx, params.test_id);
    ctx.body = await withTimeout(ctx.deps, (signal) => analyseTest(ctx.deps, ctx.state.principal!.userId, test, query, signal));
    ctx.set('Cache-Control', 'private, no-cache');
  },
);

export const acceptTestAnalysisRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/tests/{test_id}/analysis/accept',
    operationId: 'accept_test_analysis',
    summary: "Keep chosen values of a test's analysis in its results",
    description:
      'The analysis is computed again with the same query options as GET …/analysis; for each member the body names, the value of the method ' +
      "chosen is written into the test's `results` (a lactate method's Marker, a model's critical power or speed and W′ or D′, the highest heart " +
      'rate or vo2); the other members are kept. A method that does not apply is a 422 naming the member, and nothing is written.',
    tags: ['tests'],
    auth: { scopes: ['data:write'] },
    params: TestParams,
    query: AnalysisQuery,
    body: AnalysisAccept,
    responses: {
      200: { description: 'The test with its results', schema: TestSummary },
      404: { description: 'No such test of this user' },
    },
  },
  async (ctx, { params, query, body }) => {
    const { userId, clientId } = ctx.state.principal!;
    const test = await ownTest(ctx, params.test_id);
    const analysis = await withTimeout(ctx.deps, (signal) => analyseTest(ctx.deps, userId, test, query, signal));
    const row = await mergeTestResults(ctx.deps.db, userId, test.id, acceptedResults(analysis, body), ctx.deps.now());
    if (!row) throw new NotFound('Test not found');
    await recomputeLoad(ctx.deps, userId);
    const metadata = await appMetadataOf(ctx.deps.db, 'test', clientId, [row.id]);
    ctx.body = testSummaryOut(row, metadata.get(row.id) ?? null);
  },
);
