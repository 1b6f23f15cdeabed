import { z } from 'zod';
import { defineRoute } from '../../http/route.ts';
import { NotFound } from '../../services/errors.ts';
import { SourceOut, sourceOut } from '../../services/activities/model.ts';
import { Limit, Offset } from '../../services/activities/query.ts';
import { activityIdsOf, findUserSource, listSources } from '../../../db/sources.ts';
import { isUuid } from '../../../lib/ids.ts';
import { NOT_MODIFIED, sendTaggedJson, VALIDATOR_HEADERS } from '../conditional.ts';
import { LINK_HEADER, pageOf, setPageLinks } from '../pagination.ts';

const VALIDATED =
  'Carries a strong `ETag` (a hash of the body) and `Cache-Control: private, no-cache`: a request whose `If-None-Match` names it is answered ' +
  '304 without a body.';

export const listSourcesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/sources/',
    operationId: 'list_sources',
    summary: 'List uploaded files (sources), newest first',
    description: `${VALIDATED} \`Link\` gives the \`next\` (unless this is the last page), \`prev\` (unless \`offset\` is 0) and \`first\` pages.`,
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({ limit: Limit, offset: Offset }),
    responses: {
      200: { description: 'Sources, newest first', schema: z.array(SourceOut), headers: { ...VALIDATOR_HEADERS, Link: LINK_HEADER } },
      304: NOT_MODIFIED,
    },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const { rows: sources, more } = pageOf(
      await listSources(db, ctx.state.principal!.userId, { limit: query.limit + 1, offset: query.offset }),
      query.limit,
    );
    const ids = await activityIdsOf(
      db,
      sources.map((s) => s.id),
    );
    setPageLinks(ctx, { ...query, more });
    sendTaggedJson(
      ctx,
      sources.map((s) => sourceOut(s, ids.get(s.id) ?? [])),
    );
  },
);

export const getSourceRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/sources/{source_id}',
    operationId: 'get_source',
    summary: 'One uploaded file: processing, processed (with activity_ids) or failed (with an error)',
    description: VALIDATED,
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: z.object({ source_id: z.string() }),
    responses: {
      200: { description: 'The source', schema: SourceOut, headers: VALIDATOR_HEADERS },
      304: NOT_MODIFIED,
      404: { description: 'No such source of this user' },
    },
  },
  async (ctx, { params }) => {
    const { db } = ctx.deps;
    const source = isUuid(params.source_id) ? await findUserSource(db, ctx.state.principal!.userId, params.source_id) : undefined;
    if (!source) throw new NotFound('Source not found');
    const ids = await activityIdsOf(db, [source.id]);
    sendTaggedJson(ctx, sourceOut(source, ids.get(source.id) ?? []));
  },
);

export const sourceRoutes = [listSourcesRoute, getSourceRoute];
