import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { NotFound } from '../errors.ts';
import { SourceOut, sourceOut } from '../activities/model.ts';
import { Limit, Offset } from '../activities/query.ts';
import { activityIdsOf, findUserSource, listSources } from '../../db/sources.ts';
import { isUuid } from '../../lib/ids.ts';

export const listSourcesRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/sources/',
    operationId: 'list_sources',
    summary: 'List uploaded files (sources), newest first',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    query: z.object({ limit: Limit, offset: Offset }),
    responses: { 200: { description: 'Sources, newest first', schema: z.array(SourceOut) } },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const sources = await listSources(db, ctx.state.principal!.userId, query);
    const ids = await activityIdsOf(db, sources.map((s) => s.id));
    ctx.body = sources.map((s) => sourceOut(s, ids.get(s.id) ?? []));
  },
);

export const getSourceRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/sources/{source_id}',
    operationId: 'get_source',
    summary: 'One uploaded file: processing, processed (with activity_ids) or failed (with an error)',
    tags: ['activities'],
    auth: { scopes: ['data:read'] },
    params: z.object({ source_id: z.string() }),
    responses: { 200: { description: 'The source', schema: SourceOut }, 404: { description: 'No such source of this user' } },
  },
  async (ctx, { params }) => {
    const { db } = ctx.deps;
    const source = isUuid(params.source_id) ? await findUserSource(db, ctx.state.principal!.userId, params.source_id) : undefined;
    if (!source) throw new NotFound('Source not found');
    const ids = await activityIdsOf(db, [source.id]);
    ctx.body = sourceOut(source, ids.get(source.id) ?? []);
  },
);

export const sourceRoutes = [listSourcesRoute, getSourceRoute];
