import { activityLoadRows } from '../../../../db/training-load.ts';
import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { ActivityDetails, ActivitySummary, activitySummaryOut } from '../../../services/resources/activities-traces.ts';
import { Limit, Offset, queryArray, SportParam, timeFilter, TimeBoundParam } from '../../../services/activities/query.ts';
import { listActivities, listActivitySummaries } from '../../../../db/activities.ts';
import { linkedActivity, tracesOfActivities } from '../../../services/traces/links.ts';
import { sendCachedJson } from '../../activities/read-cache.ts';
import { NOT_MODIFIED, VALIDATOR_HEADERS } from '../../conditional.ts';
import { LINK_HEADER, pageOf } from '../../pagination.ts';
import { CONTENT_ENCODING_HEADER } from '../../../http/middleware/compression.ts';

const Sports = queryArray(SportParam)
  .optional()
  .describe('Sports to include, each matching its sub-sports (`cycling` matches `cycling.road+virtual`)');

export const listActivitiesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/',
    operationId: 'list_activities',
    summary: 'List activities, newest first',
    description:
      "`start`/`end` take a date (whole days of the activity's local start, inclusive) or an instant with an offset (compared with " +
      'the UTC start). `sport` and `tags` repeat the key or separate values with commas; `sports` is a deprecated alias of `sport`. ' +
      'An activity matches `tags` when it has any of them. Laps are left out (null) of lists: read one activity for them. `traces` lists the ' +
      'traces whose timestamp lies within each activity. Pages are cached per user, application and query, and every change they ' +
      'show (activities, traces, app metadata) invalidates them in its own transaction: a read after a write always shows it. ' +
      "Every page has a strong `ETag` (derived from the user's data version, the application and the query) and `Cache-Control: private, no-cache`: " +
      'a request whose `If-None-Match` names it is answered 304 without a body. `Link` gives the `next` (unless this is the last page), `prev` ' +
      '(unless `offset` is 0) and `first` pages.',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: TimeBoundParam.optional(),
      end: TimeBoundParam.optional(),
      limit: Limit.describe('At most 1000'),
      offset: Offset,
      sport: Sports,
      sports: Sports.meta({ deprecated: true }),
      tags: queryArray(z.string().min(1).max(64)).optional(),
    }),
    responses: {
      200: {
        description: 'Activities, newest first',
        schema: z.array(ActivitySummary),
        headers: { ...VALIDATOR_HEADERS, Link: LINK_HEADER, 'Content-Encoding': CONTENT_ENCODING_HEADER },
      },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    const paging = { limit: query.limit, offset: query.offset };
    await sendCachedJson(
      ctx,
      query,
      async () => {
        const { rows, more } = pageOf(
          await listActivitySummaries(
            db,
            userId,
            clientId,
            { ...timeFilter(query.start, query.end), sports: [...(query.sport ?? []), ...(query.sports ?? [])], tags: query.tags },
            { limit: query.limit + 1, offset: query.offset },
          ),
          query.limit,
        );
        const traces = await tracesOfActivities(db, userId, clientId, rows);
        const load = await activityLoadRows(
          db,
          rows.map((r) => r.id),
        );
        return {
          value: rows.map(({ app_metadata, ...row }) =>
            activitySummaryOut(row, app_metadata, { traces: traces.get(row.id) ?? [], load: load.get(row.id) }),
          ),
          more,
        };
      },
      paging,
    );
  },
);

export const latestActivityRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/activities/latest',
    operationId: 'latest_activity',
    summary: 'The most recent activity (optionally of a sport), or null',
    description:
      'Answers 200 with JSON `null` when the user has no matching activity. Cached like the list, and invalidated by the same changes; ' +
      'a request whose `If-None-Match` names the `ETag` is answered 304 without a body (`Cache-Control: private, no-cache`).',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({ sport: Sports }),
    responses: {
      200: { description: 'The newest matching activity, or null', schema: ActivityDetails.nullable(), headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    await sendCachedJson(ctx, query, async () => {
      const [row] = await listActivities(db, userId, { sports: query.sport }, { limit: 1, offset: 0 });
      return { value: row ? await linkedActivity(db, userId, clientId, row) : null };
    });
  },
);
