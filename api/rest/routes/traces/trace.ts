import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { NotFound, UnprocessableEntity } from '../../../services/errors.ts';
import { TraceCreateOrUpdate, traceFields } from '../../../services/traces/model.ts';
import { TraceDetails } from '../../../services/resources/activities-traces.ts';
import { linkedTraces } from '../../../services/traces/links.ts';
import { createTrace, deleteTrace, findTrace, replaceTrace, type TraceFields } from '../../../../db/traces.ts';
import { findTest, linkedTraceCount } from '../../../../db/tests.ts';
import { MAX_TRACES_PER_TEST } from '../../../services/tests/model.ts';
import type { TraceRow } from '../../../../db/database.ts';
import { isUuid } from '../../../../lib/ids.ts';
import { NOT_MODIFIED, notModified, readTag, VALIDATOR_HEADERS } from '../../conditional.ts';

export const TraceParams = z.object({ trace_id: z.string() });

const notFound = () => new NotFound('Trace not found');

/** The caller's trace, or 404 (also for another user's trace and for ids that are not ours). */
export async function ownTrace(ctx: Ctx, id: string): Promise<TraceRow> {
  const trace = isUuid(id) ? await findTrace(ctx.deps.db, ctx.state.principal!.userId, id) : undefined;
  if (!trace) throw notFound();
  return trace;
}

/**
 * The stored fields of a body whose `test_id`, when set, names one of the caller's tests (written as
 * the test's own id); a test_id naming none (another user's, or no test at all) is 422, unless it is
 * the one the replaced trace already has.
 */
async function checkedFields(ctx: Ctx, body: Parameters<typeof traceFields>[0], stored?: TraceRow): Promise<TraceFields> {
  const fields = traceFields(body);
  // A replace that sends back the test_id the trace already has (one written before tests were stored) keeps it.
  if (fields.test_id === null || fields.test_id === stored?.test_id) return fields;
  const test = await findTest(ctx.deps.db, ctx.state.principal!.userId, fields.test_id);
  if (!test) throw new UnprocessableEntity([{ loc: ['body', 'test_id'], msg: 'names no test of this user', type: 'value_error.test_id' }]);
  if (stored?.test_id !== test.id && (await linkedTraceCount(ctx.deps.db, test.user_id, test.id)) >= MAX_TRACES_PER_TEST)
    throw new UnprocessableEntity([
      {
        loc: ['body', 'test_id'],
        msg: `the test already holds ${MAX_TRACES_PER_TEST} traces, the most one test links`,
        type: 'value_error.test_full',
      },
    ]);
  return { ...fields, test_id: test.id };
}

async function details(ctx: Ctx, row: TraceRow) {
  const { userId, clientId } = ctx.state.principal!;
  const [out] = await linkedTraces(ctx.deps.db, userId, clientId, [row]);
  return out!;
}

const BODY_NOTE =
  '`timestamp` needs a UTC offset (a naive date-time is 422); the offset is kept for `timestamp_local`. `power` and `heart_rate` are ' +
  "non-negative integers, `speed` and `vo2` non-negative numbers, `rpe` an integer. `test_id`, when set, must name one of the user's tests (otherwise 422); " +
  `the trace then belongs to it (\`test_match: explicit\`; a test links at most ${MAX_TRACES_PER_TEST} traces, beyond which it is 422); ` +
  'without it, to the test whose window holds its timestamp (`window`).';

export const createTraceRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/traces/',
    operationId: 'create_trace',
    summary: 'Create a trace',
    description: `${BODY_NOTE} Answers 201 with the trace, linked to the activity containing it, if any.`,
    tags: ['traces'],
    auth: { scopes: ['data:write'] },
    body: TraceCreateOrUpdate,
    responses: { 201: { description: 'The stored trace', schema: TraceDetails } },
  },
  async (ctx, { body }) => {
    const row = await createTrace(ctx.deps.db, ctx.state.principal!.userId, await checkedFields(ctx, body), ctx.deps.now());
    ctx.status = 201;
    ctx.body = await details(ctx, row);
  },
);

export const getTraceRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/traces/{trace_id}',
    operationId: 'get_trace',
    summary: 'One trace, with the activity and lap containing it',
    description:
      'Carries a strong `ETag` and `Cache-Control: private, no-cache`: a matching `If-None-Match` is answered 304 without a body.',
    tags: ['traces'],
    auth: { scopes: ['data:read'] },
    params: TraceParams,
    responses: {
      200: { description: 'The trace', schema: TraceDetails, headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
      404: { description: 'No such trace of this user' },
    },
  },
  async (ctx, { params }) => {
    const etag = await readTag(ctx, 'details');
    const trace = await ownTrace(ctx, params.trace_id);
    if (notModified(ctx, etag)) return;
    ctx.body = await details(ctx, trace);
  },
);

export const replaceTraceRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/traces/{trace_id}',
    operationId: 'update_trace',
    summary: 'Replace a trace',
    description: `A full replace: fields the body omits become null (tags empty). ${BODY_NOTE} App metadata is kept.`,
    tags: ['traces'],
    auth: { scopes: ['data:write'] },
    params: TraceParams,
    body: TraceCreateOrUpdate,
    responses: { 200: { description: 'The stored trace', schema: TraceDetails }, 404: { description: 'No such trace of this user' } },
  },
  async (ctx, { params, body }) => {
    const stored = await ownTrace(ctx, params.trace_id);
    const fields = await checkedFields(ctx, body, stored);
    const row = await replaceTrace(ctx.deps.db, ctx.state.principal!.userId, stored.id, fields, ctx.deps.now());
    if (!row) throw notFound();
    ctx.body = await details(ctx, row);
  },
);

export const deleteTraceRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/traces/{trace_id}',
    operationId: 'delete_trace',
    summary: 'Delete a trace',
    description: "Removes the trace and every application's metadata on it.",
    tags: ['traces'],
    auth: { scopes: ['data:write'] },
    params: TraceParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such trace of this user' } },
  },
  async (ctx, { params }) => {
    if (!isUuid(params.trace_id) || !(await deleteTrace(ctx.deps.db, ctx.state.principal!.userId, params.trace_id, ctx.deps.now())))
      throw notFound();
    ctx.status = 204;
  },
);
