import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { tagsOf } from '../../../../db/profile.ts';

export const profileTagsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/tags/',
    operationId: 'profile_tags',
    summary: "Every tag used on the user's activities and traces",
    description:
      "The union of the tags of all the user's activities and traces, each once, sorted ascending (by Unicode code point). " +
      'An empty array when there are none.',
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    responses: { 200: { description: 'The tags, sorted and unique', schema: z.array(z.string()) } },
  },
  async (ctx) => {
    ctx.body = await tagsOf(ctx.deps.db, ctx.state.principal!.userId);
  },
);
