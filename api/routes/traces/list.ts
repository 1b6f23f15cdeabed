import { z } from 'zod';
import { defineRoute } from '../../route.ts';
import { Limit, Offset, queryArray, SportParam, timeFilter, TimeBoundParam } from '../../activities/query.ts';
import { TraceDetails } from '../../resources/activities-traces.ts';
import { linkedTraces } from '../../traces/links.ts';
import { listTraces } from '../../../db/traces.ts';

const Sports = queryArray(SportParam).optional().describe('Sports to include, each matching its sub-sports; traces without a sport match no sport filter');

export const listTracesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/traces/',
    operationId: 'list_traces',
    summary: 'List traces, newest first',
    description:
      '`start`/`end` take a date (whole days of the trace\'s local time, inclusive) or an instant with an offset (compared with the ' +
      'UTC timestamp). `sport` and `tags` repeat the key or separate values with commas; `sports` is a deprecated alias of `sport`. ' +
      'A trace matches `tags` when it has any of them. Each trace carries the activity containing it and that activity\'s lap.',
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
    responses: { 200: { description: 'Traces, newest first', schema: z.array(TraceDetails) } },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    const rows = await listTraces(
      db,
      userId,
      { ...timeFilter(query.start, query.end), sports: [...(query.sport ?? []), ...(query.sports ?? [])], tags: query.tags },
      { limit: query.limit, offset: query.offset },
    );
    ctx.body = await linkedTraces(db, userId, clientId, rows);
  },
);
