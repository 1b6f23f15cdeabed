import { z } from 'zod';
import { defineRoute, type Route } from '../../../http/route.ts';
import type { Ctx } from '../../../http/context.ts';
import { Forbidden, NotFound, UnprocessableEntity } from '../../../services/errors.ts';
import {
  AuthorizedTeamResponse,
  AuthorizeTeam,
  authorizedTeamResponse,
  nameMatches,
  TEAM_SCOPES,
  TeamCreate,
  TeamResponse,
  teamResponse,
  TeamUpdate,
  UserSummary,
  userSummary,
} from '../../../services/coaching/model.ts';
import {
  authorizedTeams,
  authorizeTeam,
  createTeam,
  deleteTeam,
  findTeam,
  revokeTeamAuthorization,
  teamsOfMember,
  updateTeam,
} from '../../../../db/teams.ts';
import { sharedUsers } from '../../../../db/managed-users.ts';
import { memberTeam, TeamId } from './access.ts';
import { invitationRoutes } from './invitations.ts';
import { memberRoutes } from './members.ts';

/** `/api/v1/teams/`: teams, and the athletes' authorisations of them (docs/coaching.md). */

const READ = { scopes: ['data:read'], noDelegation: true } as const;
const WRITE = { scopes: ['data:write'], noDelegation: true } as const;
const NOTE = 'Not with a delegated token (403).';
export const listTeamsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/',
    operationId: 'list_teams',
    summary: 'The teams you are a member of, with your role',
    description: `${NOTE} \`role\` is \`owner\` or \`member\` (a coach), as SweatStack's client reads it.`,
    tags: ['teams'],
    auth: READ,
    responses: { 200: { description: 'Your teams, by name', schema: z.array(TeamResponse) } },
  },
  async (ctx) => {
    const teams = await teamsOfMember(ctx.deps.db, ctx.state.principal!.userId);
    ctx.body = teams.map((t) => teamResponse(t, ctx.deps.config.BASE_URL));
  },
);

export const createTeamRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/teams/',
    operationId: 'create_team',
    summary: 'Create a team; you are its owner',
    description: `${NOTE} A name of 1–100 characters; \`url\`, \`image\` and \`privacy_statement\` are http(s) URLs, the service's own when left out.`,
    tags: ['teams'],
    auth: WRITE,
    body: TeamCreate,
    responses: { 201: { description: 'The team', schema: TeamResponse } },
  },
  async (ctx, { body }) => {
    const team = await createTeam(
      ctx.deps.db,
      {
        name: body.name,
        description: body.description ?? '',
        url: body.url ?? null,
        image: body.image ?? null,
        privacy_statement: body.privacy_statement ?? null,
      },
      ctx.state.principal!.userId,
    );
    ctx.status = 201;
    ctx.body = teamResponse(team, ctx.deps.config.BASE_URL);
  },
);

export const getTeamRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/{team_id}',
    operationId: 'get_team',
    summary: 'One of your teams',
    description: `${NOTE} Members only: another team is 404.`,
    tags: ['teams'],
    auth: READ,
    params: TeamId,
    responses: { 200: { description: 'The team', schema: TeamResponse }, 404: { description: 'Not a team of yours' } },
  },
  async (ctx, { params }) => {
    ctx.body = teamResponse(await memberTeam(ctx, params.team_id), ctx.deps.config.BASE_URL);
  },
);

export const updateTeamRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/teams/{team_id}',
    operationId: 'update_team',
    summary: 'Rename a team or change what it shows',
    description: `${NOTE} Owners only (a member gets 403, anyone else 404); the fields left out are unchanged.`,
    tags: ['teams'],
    auth: WRITE,
    params: TeamId,
    body: TeamUpdate,
    responses: {
      200: { description: 'The team', schema: TeamResponse },
      403: { description: 'Not an owner' },
      404: { description: 'Not a team of yours' },
    },
  },
  async (ctx, { params, body }) => {
    const team = await memberTeam(ctx, params.team_id, 'owner');
    const change = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
    const updated = Object.keys(change).length ? await updateTeam(ctx.deps.db, team.id, change) : team;
    ctx.body = teamResponse({ ...updated, role: team.role }, ctx.deps.config.BASE_URL);
  },
);

export const deleteTeamRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/teams/{team_id}',
    operationId: 'delete_team',
    summary: 'Delete a team',
    description: `${NOTE} Owners only. Its members, invitations and athletes' authorisations go with it, and every delegated token made through it fails from the next request.`,
    tags: ['teams'],
    auth: WRITE,
    params: TeamId,
    responses: { 204: { description: 'Deleted' }, 403: { description: 'Not an owner' }, 404: { description: 'Not a team of yours' } },
  },
  async (ctx, { params }) => {
    const team = await memberTeam(ctx, params.team_id, 'owner');
    await deleteTeam(ctx.deps.db, team.id);
    ctx.status = 204;
  },
);

export const teamUsersRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/{team_id}/users',
    operationId: 'team_users',
    summary: 'The athletes who authorised the team, with the scopes they granted',
    description: `${NOTE} Members only: another team is 404. \`name\` keeps those whose display name contains it, ignoring case.`,
    tags: ['teams'],
    auth: READ,
    params: TeamId,
    query: z.object({ name: z.string().max(200).optional().describe('Only users whose display name contains this, ignoring case') }),
    responses: { 200: { description: 'The athletes', schema: z.array(UserSummary) }, 404: { description: 'Not a team of yours' } },
  },
  async (ctx, { params, query }) => {
    const team = await memberTeam(ctx, params.team_id);
    const users = await sharedUsers(ctx.deps.db, ctx.state.principal!.userId, team.id);
    ctx.body = users.filter((u) => nameMatches(query.name, u)).map((u) => userSummary(u, u.scopes));
  },
);

/**
 * Authorising is the athlete's own act, or a manager's for a managed user (a delegated token made as
 * its manager); never a coach's through a team (they could share the athlete with another team).
 */
function assertMayAuthorize(ctx: Ctx): void {
  const delegation = ctx.state.principal!.delegation;
  if (delegation && delegation.teamId !== null)
    throw new Forbidden('A team’s delegated token cannot share the athlete with a team: only the athlete (or their manager) can');
}

const AUTHORIZE = { scopes: ['data:write'] } as const;

export const authorizeTeamRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/teams/{team_id}/authorize',
    operationId: 'authorize_team',
    summary: 'Let a team’s members read (and optionally write) your data',
    description:
      '`scopes`: `data:read`, with `data:write` to let the team write too (anything else is 422; it replaces what you ' +
      'granted the team before). Any existing team id (a coach gives it to you); unknown is 404. With a delegated token ' +
      'only as the manager of a managed user (a team’s delegated token gets 403). Answers `{team_id, user_id, scopes}`.',
    tags: ['teams'],
    auth: AUTHORIZE,
    params: TeamId,
    body: AuthorizeTeam,
    responses: {
      200: {
        description: 'What was granted',
        schema: z.object({ team_id: z.uuid(), user_id: z.uuid(), scopes: z.array(z.string()) }).meta({ id: 'TeamAuthorization' }),
      },
      404: { description: 'No such team' },
    },
  },
  async (ctx, { params, body }) => {
    assertMayAuthorize(ctx);
    const team = await findTeam(ctx.deps.db, params.team_id);
    if (!team) throw new NotFound('No such team');
    const unknown = body.scopes.filter((s) => !(TEAM_SCOPES as readonly string[]).includes(s));
    const scopes = TEAM_SCOPES.filter((s) => body.scopes.includes(s));
    if (unknown.length || !scopes.includes('data:read'))
      throw new UnprocessableEntity([
        {
          loc: ['body', 'scopes'],
          msg: unknown.length ? `A team can be granted data:read and data:write only, not ${unknown.join(', ')}` : 'data:read is required',
          type: 'value_error.scopes',
        },
      ]);
    const userId = ctx.state.principal!.userId;
    await authorizeTeam(ctx.deps.db, team.id, userId, scopes);
    ctx.body = { team_id: team.id, user_id: userId, scopes };
  },
);

export const revokeTeamRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/teams/{team_id}/authorize',
    operationId: 'revoke_team_authorization',
    summary: 'Withdraw a team’s access to your data',
    description: 'Every delegated token made through the team for you fails from the next request. 404 when you had not authorised it.',
    tags: ['teams'],
    auth: AUTHORIZE,
    params: TeamId,
    responses: { 204: { description: 'Withdrawn' }, 404: { description: 'Not a team you authorised' } },
  },
  async (ctx, { params }) => {
    assertMayAuthorize(ctx);
    if (!(await revokeTeamAuthorization(ctx.deps.db, params.team_id, ctx.state.principal!.userId)))
      throw new NotFound('Not a team you authorised');
    ctx.status = 204;
  },
);

export const authorizedTeamsRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/teams/authorized',
    operationId: 'authorized_teams',
    summary: 'The teams you authorised, with the scopes you granted',
    description: 'With a delegated token only as the manager of a managed user.',
    tags: ['teams'],
    auth: { scopes: ['data:read'] },
    responses: { 200: { description: 'The teams, by name', schema: z.array(AuthorizedTeamResponse) } },
  },
  async (ctx) => {
    assertMayAuthorize(ctx);
    const teams = await authorizedTeams(ctx.deps.db, ctx.state.principal!.userId);
    ctx.body = teams.map((t) => authorizedTeamResponse(t, ctx.deps.config.BASE_URL));
  },
);

export const teamRoutes: Route[] = [
  listTeamsRoute,
  createTeamRoute,
  authorizedTeamsRoute,
  getTeamRoute,
  updateTeamRoute,
  deleteTeamRoute,
  teamUsersRoute,
  authorizeTeamRoute,
  revokeTeamRoute,
  ...invitationRoutes,
  ...memberRoutes,
];
