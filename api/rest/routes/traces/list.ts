import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { Limit, Offset, queryArray, SportParam, timeFilter, TimeBoundParam } from '../../../services/activities/query.ts';
import { TraceDetails } from '../../../services/resources/activities-traces.ts';
import { linkedTraces } from '../../../services/traces/links.ts';
import { listTraces } from '../../../../db/traces.ts';
import { NOT_MODIFIED, notModified, readTag, VALIDATOR_HEADERS } from '../../conditional.ts';
import { LINK_HEADER, pageOf, setPageLinks } from '../../pagination.ts';

const Sports = queryArray(SportParam)
  .optional()
  .describe('Sports to include, each matching its sub-sports; traces without a sport match no sport filter');

export const listTracesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/traces/',
    operationId: 'list_traces',
    summary: 'List traces, newest first',
    description:
      "`start`/`end` take a date (whole days of the trace's local time, inclusive) or an instant with an offset (compared with the " +
      'UTC timestamp). `sport` and `tags` repeat the key or separate values with commas; `sports` is a deprecated alias of `sport`. ' +
      "A trace matches `tags` when it has any of them. Each trace carries the activity containing it and that activity's lap. " +
      'Every page has a strong `ETag` and `Cache-Control: private, no-cache` (a matching `If-None-Match` is answered 304 without a body), and ' +
      '`Link` gives the `next` (unless this is the last page), `prev` (unless `offset` is 0) and `first` pages.',
    tags: ['traces'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: TimeBoundParam.optional(),
      end: TimeBoundParam.optional(),
      limit: Limit.default(100).describe('Default 100, at most 1000'),
      offset: Offset,
      sport: Sports,
      sports: Sports.meta({ deprecated: true }),
      tags: queryArray(z.string().min(1).max(64)).optional(),
    }),
    responses: {
      200: { description: 'Traces, newest first', schema: z.array(TraceDetails), headers: { ...VALIDATOR_HEADERS, Link: LINK_HEADER } },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    if (notModified(ctx, await readTag(ctx, query))) return;
    const { rows, more } = pageOf(
      await listTraces(
        db,
        userId,
        { ...timeFilter(query.start, query.end), sports: [...(query.sport ?? []), ...(query.sports ?? [])], tags: query.tags },
        { limit: query.limit + 1, offset: query.offset },
      ),
      query.limit,
    );
    setPageLinks(ctx, { limit: query.limit, offset: query.offset, more });
    ctx.body = await linkedTraces(db, userId, clientId, rows);
  },
);
