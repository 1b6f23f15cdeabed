import { z } from 'zod';
import type { Ctx } from '../../../http/context.ts';
import { Forbidden, NotFound } from '../../../services/errors.ts';
import { teamOfMember } from '../../../../db/teams.ts';

/** What the team routes share: the path parameter, and the caller's membership checked. */
export const TeamId = z.object({ team_id: z.string().describe('The team’s id') });

/** The team and the caller's role in it; 404 when it does not exist or the caller is not a member (the same answer). */
export async function memberTeam(ctx: Ctx, teamId: string, need?: 'owner') {
  const team = await teamOfMember(ctx.deps.db, teamId, ctx.state.principal!.userId);
  if (!team) throw new NotFound('No such team among yours');
  if (need === 'owner' && team.role !== 'owner') throw new Forbidden('Only an owner of the team may do this');
  return team;
}
