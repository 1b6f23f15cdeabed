import { z } from 'zod';
import { defineRoute, type Route } from '../../../http/route.ts';
import { NotFound } from '../../../services/errors.ts';
import { invitationUrl, teamResponse, TeamResponse } from '../../../services/coaching/model.ts';
import { acceptInvitation, createInvitation, invitationStatus, revokeInvitation, teamInvitations } from '../../../../db/teams.ts';
import { memberTeam, TeamId } from './access.ts';

/** Invitation links: an owner makes them, anyone signed in uses one once to join (docs/coaching.md). */

const NOTE = 'Not with a delegated token (403).';
const DAY_MS = 86_400_000;

const InvitationOut = z
  .object({
    id: z.uuid(),
    role: z.enum(['owner', 'coach']),
    created_at: z.string(),
    expires_at: z.string(),
    status: z.enum(['open', 'used', 'expired', 'revoked']),
    url: z.string().optional().describe('The link to give: shown once, when the invitation is made'),
  })
  .meta({ id: 'TeamInvitation' });

function invitationOut(
  i: { id: string; role: 'owner' | 'coach'; created_at: Date; expires_at: Date; used_at: Date | null; revoked_at: Date | null },
  now: Date,
  url?: string,
): z.infer<typeof InvitationOut> {
  const status = invitationStatus(i, now);
  return {
    id: i.id,
    role: i.role,
    created_at: i.created_at.toISOString(),
    expires_at: i.expires_at.toISOString(),
    status,
    ...(url ? { url } : {}),
  };
}

export const createInvitationRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/teams/{team_id}/invitations',
    operationId: 'create_team_invitation',
    summary: 'Make an invitation link to join the team',
    description:
      `${NOTE} Owners only. The link (\`url\`, shown once) lets one signed-in user join as \`role\` (\`coach\` by default) ` +
      'within `expires_in_days` (1–30, default 7); it can be revoked until used.',
    tags: ['teams'],
    auth: { scopes: ['data:write'], noDelegation: true },
    params: TeamId,
    body: z
      .object({
        role: z.enum(['owner', 'coach']).default('coach'),
        expires_in_days: z.number().int().min(1).max(30).default(7),
      })
      .meta({ id: 'TeamInvitationCreate' }),
    responses: { 201: { description: 'The invitation with its link', schema: InvitationOut } },
  },
  async (ctx, { params, body }) => {
    const team = await memberTeam(ctx, params.team_id, 'owner');
    const now = ctx.deps.now();
    const { invitation, secret } = await createInvitation(ctx.deps.db, {
      teamId: team.id,
      role: body.role,
      createdBy: ctx.state.principal!.userId,
      expiresAt: new Date(now.getTime() + body.expires_in_days * DAY_MS),
    });
    ctx.status = 201;
    ctx.body = invitationOut(invitation, now, invitationUrl(ctx.deps.config.BASE_URL, secret));
  },
);

export const listInvitationsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/{team_id}/invitations',
    operationId: 'list_team_invitations',
    summary: 'The team’s invitations, newest first (the latest 100)',
    description: `${NOTE} Owners only; the links themselves are never shown again.`,
    tags: ['teams'],
    auth: { scopes: ['data:read'], noDelegation: true },
    params: TeamId,
    responses: { 200: { description: 'The invitations', schema: z.array(InvitationOut) } },
  },
  async (ctx, { params }) => {
    const team = await memberTeam(ctx, params.team_id, 'owner');
    const now = ctx.deps.now();
    ctx.body = (await teamInvitations(ctx.deps.db, team.id)).map((i) => invitationOut(i, now));
  },
);

export const revokeInvitationRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/teams/{team_id}/invitations/{invitation_id}',
    operationId: 'revoke_team_invitation',
    summary: 'Revoke an unused invitation',
    description: `${NOTE} Owners only; 404 for an invitation already used or revoked, or of another team.`,
    tags: ['teams'],
    auth: { scopes: ['data:write'], noDelegation: true },
    params: TeamId.extend({ invitation_id: z.string() }),
    responses: { 204: { description: 'Revoked' }, 404: { description: 'No open invitation of the team with this id' } },
  },
  async (ctx, { params }) => {
    const team = await memberTeam(ctx, params.team_id, 'owner');
    if (!(await revokeInvitation(ctx.deps.db, team.id, params.invitation_id, ctx.deps.now())))
      throw new NotFound('No open invitation of the team with this id');
    ctx.status = 204;
  },
);

export const joinTeamRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/teams/join',
    operationId: 'join_team',
    summary: 'Join a team with an invitation link',
    description: `${NOTE} \`invitation\`: the link or its last part. Single use: a link used, expired or revoked is 404 (the same answer for each).`,
    tags: ['teams'],
    auth: { scopes: ['data:write'], noDelegation: true },
    body: z.object({ invitation: z.string().min(1).max(500) }).meta({ id: 'TeamJoin' }),
    responses: { 200: { description: 'The team joined', schema: TeamResponse }, 404: { description: 'No open invitation with this link' } },
  },
  async (ctx, { body }) => {
    const secret = body.invitation.trim().split('/').pop()!;
    const userId = ctx.state.principal!.userId;
    const team = await acceptInvitation(ctx.deps.db, secret, userId, ctx.deps.now());
    if (!team) throw new NotFound('No open invitation with this link: it was used, it expired or it was revoked');
    ctx.body = teamResponse(await memberTeam(ctx, team.id), ctx.deps.config.BASE_URL);
  },
);

export const invitationRoutes: Route[] = [joinTeamRoute, createInvitationRoute, listInvitationsRoute, revokeInvitationRoute];
