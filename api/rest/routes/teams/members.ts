import { z } from 'zod';
import { defineRoute, type Route } from '../../../http/route.ts';
import { Conflict, NotFound } from '../../../services/errors.ts';
import { displayName } from '../../../services/coaching/model.ts';
import { removeMember, teamMembers } from '../../../../db/teams.ts';
import { memberTeam, TeamId } from './access.ts';

/** A team's members: who they are, and leaving or being removed (docs/coaching.md). */

const MemberOut = z
  .object({ user_id: z.uuid(), display_name: z.string(), role: z.enum(['owner', 'coach']), joined_at: z.string() })
  .meta({ id: 'TeamMember' });

export const listMembersRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/{team_id}/members',
    operationId: 'list_team_members',
    summary: 'The team’s members and their roles',
    description: 'Members only (another team is 404); not with a delegated token (403).',
    tags: ['teams'],
    auth: { scopes: ['data:read'], noDelegation: true },
    params: TeamId,
    responses: { 200: { description: 'The members, in the order they joined', schema: z.array(MemberOut) } },
  },
  async (ctx, { params }) => {
    const team = await memberTeam(ctx, params.team_id);
    ctx.body = (await teamMembers(ctx.deps.db, team.id)).map((m) => ({
      user_id: m.user_id,
      display_name: displayName(m),
      role: m.role,
      joined_at: m.created_at.toISOString(),
    }));
  },
);

export const removeMemberRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/teams/{team_id}/members/{user_id}',
    operationId: 'remove_team_member',
    summary: 'Leave a team, or remove a member (owners)',
    description:
      'Your own id leaves the team; an owner may remove anyone. The last owner cannot leave (409: delete the team, or make ' +
      'another owner first). Every delegated token the member made through the team fails from the next request. Not with a delegated token (403).',
    tags: ['teams'],
    auth: { scopes: ['data:write'], noDelegation: true },
    params: TeamId.extend({ user_id: z.string() }),
    responses: {
      204: { description: 'Removed' },
      404: { description: 'Not a team of yours, or not a member' },
      409: { description: 'The last owner' },
    },
  },
  async (ctx, { params }) => {
    const self = ctx.state.principal!.userId;
    const team = await memberTeam(ctx, params.team_id, params.user_id === self ? undefined : 'owner');
    const outcome = await removeMember(ctx.deps.db, team.id, params.user_id);
    if (outcome === 'not_member') throw new NotFound('Not a member of the team');
    if (outcome === 'last_owner') throw new Conflict('The last owner cannot leave: delete the team, or invite another owner first');
    ctx.status = 204;
  },
);

export const memberRoutes: Route[] = [listMembersRoute, removeMemberRoute];
