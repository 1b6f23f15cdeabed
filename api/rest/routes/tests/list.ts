import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { Offset, queryArray, SportParam, timeFilter, TimeBoundParam } from '../../../services/activities/query.ts';
import { TestSummary, testSummaryOut } from '../../../services/resources/tests.ts';
import { listTests } from '../../../../db/tests.ts';
import { appMetadataOf } from '../../../../db/app-metadata.ts';
import { NOT_MODIFIED, notModified, readTag, VALIDATOR_HEADERS } from '../../conditional.ts';
import { LINK_HEADER, pageOf, setPageLinks } from '../../pagination.ts';

export const listTestsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/tests/',
    operationId: 'list_tests',
    summary: 'List tests, newest first',
    description:
      "`start`/`end` take a date (whole days of the test's local start, inclusive) or an instant with an offset (compared with the UTC start). " +
      '`sport` and `tags` repeat the key or separate values with commas; a test matches `sport` when it is one of them (or a sub-sport) and `tags` ' +
      'when it has every one of them. `created_by` keeps the tests an application (its client id) created. Every page has a strong `ETag`, and `Link` ' +
      'gives the `next`, `prev` and `first` pages.',
    tags: ['tests'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      start: TimeBoundParam.optional(),
      end: TimeBoundParam.optional(),
      sport: queryArray(SportParam).optional().describe('Sports to include, each matching its sub-sports'),
      tags: queryArray(z.string().min(1).max(64)).optional().describe('Tags a test must all have'),
      created_by: z.string().min(1).max(200).optional().describe('Only the tests this application (client id) created'),
      limit: z.coerce.number().int().min(1).max(50).default(50).describe('Default 50, at most 50'),
      offset: Offset,
    }),
    responses: {
      200: { description: 'Tests, newest first', schema: z.array(TestSummary), headers: { ...VALIDATOR_HEADERS, Link: LINK_HEADER } },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { userId, clientId } = ctx.state.principal!;
    if (notModified(ctx, await readTag(ctx, query))) return;
    const filter = { ...timeFilter(query.start, query.end), sports: query.sport, tags: query.tags, createdBy: query.created_by };
    const { rows, more } = pageOf(await listTests(db, userId, filter, { limit: query.limit + 1, offset: query.offset }), query.limit);
    setPageLinks(ctx, { limit: query.limit, offset: query.offset, more });
    const metadata = await appMetadataOf(
      db,
      'test',
      clientId,
      rows.map((r) => r.id),
    );
    ctx.body = rows.map((row) => testSummaryOut(row, metadata.get(row.id) ?? null));
  },
);
