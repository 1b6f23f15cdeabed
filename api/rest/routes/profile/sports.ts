import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { queryBoolean } from '../../../services/activities/query.ts';
import { sportsOf } from '../../../../db/profile.ts';
import { rootSport } from '../../../../lib/sports.ts';

/** The root codes of `sports` (`cycling.road+virtual` → `cycling`), unique and sorted. */
export function rootSports(sports: string[]): string[] {
  const roots = new Set<string>();
  for (const sport of sports) {
    const root = rootSport(sport);
    if (root) roots.add(root);
  }
  return [...roots].sort();
}

export const profileSportsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/profile/sports/',
    operationId: 'profile_sports',
    summary: "Every sport of the user's activities and traces",
    description:
      "The sports (OpenSportTaxonomy strings, e.g. `cycling.road+virtual`) of all the user's activities and traces, each once, sorted " +
      'ascending; traces without a sport are left out. With `only_root=true`, the root codes instead (`cycling.road+virtual` → ' +
      '`cycling`: the first segment of the code path, without modifiers), each once, sorted. An empty array when there are none.',
    tags: ['profile'],
    auth: { scopes: ['data:read'] },
    query: z.object({
      only_root: queryBoolean(false).describe('Only the root codes (`true`/`false`, also `1`/`0`; default false)'),
    }),
    responses: { 200: { description: 'The sports, sorted and unique', schema: z.array(z.string()) } },
  },
  async (ctx, { query }) => {
    const sports = await sportsOf(ctx.deps.db, ctx.state.principal!.userId);
    ctx.body = query.only_root ? rootSports(sports) : sports;
  },
);
