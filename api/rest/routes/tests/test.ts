import { recomputeLoad } from '../../../services/training-load/recompute.ts';
import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { NotFound } from '../../../services/errors.ts';
import { TestCreateOrUpdate, testFields } from '../../../services/tests/model.ts';
import { TestSummary, testSummaryOut } from '../../../services/resources/tests.ts';
import { ActivitySummary, activitySummaryOut, TraceDetails } from '../../../services/resources/activities-traces.ts';
import { linkedTraces } from '../../../services/traces/links.ts';
import { activitiesOverlapping, createTest, deleteTest, findTest, replaceTest, tracesOfTest } from '../../../../db/tests.ts';
import { appMetadataOf } from '../../../../db/app-metadata.ts';
import type { TestRow } from '../../../../db/database.ts';
import { NOT_MODIFIED, notModified, readTag, VALIDATOR_HEADERS } from '../../conditional.ts';

export const TestParams = z.object({ test_id: z.string() });

const notFound = () => new NotFound('Test not found');

/** The caller's test, or 404 (also for another user's test and for ids that are not ours). */
export async function ownTest(ctx: Ctx, id: string): Promise<TestRow> {
  const test = await findTest(ctx.deps.db, ctx.state.principal!.userId, id);
  if (!test) throw notFound();
  return test;
}

async function summary(ctx: Ctx, row: TestRow) {
  const metadata = await appMetadataOf(ctx.deps.db, 'test', ctx.state.principal!.clientId, [row.id]);
  return testSummaryOut(row, metadata.get(row.id) ?? null);
}

export const TestDetails = z
  .object({
    ...TestSummary.shape,
    traces: z.array(TraceDetails).describe('The traces of the test (see `traces`), oldest first'),
    activities: z.array(ActivitySummary).describe("The activities whose span overlaps the test's [start, end], oldest first"),
  })
  .meta({ id: 'TestDetails' });

const BODY_NOTE =
  '`start` and `end` need a UTC offset (a naive date-time is 422); `end` defaults to `start` + 3 h and may not be before it. ' +
  '`results` holds Markers for thresholds (lt1, lt2, vt1, vt2, mlss, fatmax, first_threshold, second_threshold) and numbers for the rest.';

export const createTestRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/tests/',
    operationId: 'create_test',
    summary: 'Create a test',
    description: `${BODY_NOTE} \`created_by\` is the calling application's client id (null for first-party credentials).`,
    tags: ['tests'],
    auth: { scopes: ['data:write'] },
    body: TestCreateOrUpdate,
    responses: { 201: { description: 'The stored test', schema: TestSummary } },
  },
  async (ctx, { body }) => {
    const { userId, clientId } = ctx.state.principal!;
    const row = await createTest(ctx.deps.db, userId, testFields(body), clientId ?? null, ctx.deps.now());
    await recomputeLoad(ctx.deps, userId);
    ctx.status = 201;
    ctx.body = await summary(ctx, row);
  },
);

export const getTestRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/tests/{test_id}',
    operationId: 'get_test',
    summary: 'One test, with its traces and the activities it overlaps',
    description:
      "`traces=auto` (default): the traces inside the test's [start, end] plus those whose `test_id` names it, less those naming another test; " +
      '`traces=linked`: only those naming it, whatever their time. Carries a strong `ETag` and `Cache-Control: private, no-cache`.',
    tags: ['tests'],
    auth: { scopes: ['data:read'] },
    params: TestParams,
    query: z.object({ traces: z.enum(['auto', 'linked']).default('auto') }),
    responses: {
      200: { description: 'The test', schema: TestDetails, headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
      404: { description: 'No such test of this user' },
    },
  },
  async (ctx, { params, query }) => {
    const etag = await readTag(ctx, query);
    const test = await ownTest(ctx, params.test_id);
    if (notModified(ctx, etag)) return;
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    const [traceRows, activityRows] = await Promise.all([
      tracesOfTest(db, userId, test, query.traces),
      activitiesOverlapping(db, userId, test),
    ]);
    const activityMetadata = await appMetadataOf(
      db,
      'activity',
      clientId,
      activityRows.map((a) => a.id),
    );
    ctx.body = {
      ...(await summary(ctx, test)),
      traces: await linkedTraces(db, userId, clientId, traceRows),
      activities: activityRows.map((a) => activitySummaryOut(a, activityMetadata.get(a.id) ?? null)),
    };
  },
);

export const replaceTestRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/tests/{test_id}',
    operationId: 'update_test',
    summary: 'Replace a test',
    description: `A full replace: fields the body omits are cleared (title and results null, tags empty, \`end\` start + 3 h). ${BODY_NOTE} \`created_by\` and app metadata are kept.`,
    tags: ['tests'],
    auth: { scopes: ['data:write'] },
    params: TestParams,
    body: TestCreateOrUpdate,
    responses: { 200: { description: 'The stored test', schema: TestSummary }, 404: { description: 'No such test of this user' } },
  },
  async (ctx, { params, body }) => {
    const row = await replaceTest(ctx.deps.db, ctx.state.principal!.userId, params.test_id, testFields(body), ctx.deps.now());
    if (!row) throw notFound();
    await recomputeLoad(ctx.deps, row.user_id);
    ctx.body = await summary(ctx, row);
  },
);

export const deleteTestRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/tests/{test_id}',
    operationId: 'delete_test',
    summary: 'Delete a test',
    description:
      "Removes the test and every application's metadata on it. Traces whose `test_id` named it keep their data and lose the link.",
    tags: ['tests'],
    auth: { scopes: ['data:write'] },
    params: TestParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such test of this user' } },
  },
  async (ctx, { params }) => {
    if (!(await deleteTest(ctx.deps.db, ctx.state.principal!.userId, params.test_id, ctx.deps.now()))) throw notFound();
    await recomputeLoad(ctx.deps, ctx.state.principal!.userId);
    ctx.status = 204;
  },
);
