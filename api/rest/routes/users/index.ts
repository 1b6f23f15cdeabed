import { z } from 'zod';
import { defineRoute, type Route } from '../../../http/route.ts';
import type { Principal } from '../../../http/context.ts';
import { NotFound } from '../../../services/errors.ts';
import { queryBoolean } from '../../../services/activities/query.ts';
import {
  MANAGED_SCOPES,
  ManagedUserCreate,
  ManagedUserUpdate,
  nameMatches,
  UserResponse,
  UserSummary,
  userResponse,
  userSummary,
} from '../../../services/coaching/model.ts';
import { removeUserData } from '../../../services/coaching/remove-user.ts';
import { createManagedUser, findManagedUser, managedUsers, sharedUsers, updateManagedUser } from '../../../../db/managed-users.ts';
import { findUserById } from '../../../../db/users.ts';

/** `/api/v1/users/`: the people the caller can reach, and their managed users (docs/coaching.md). */

const ACCOUNT = { scopes: ['data:read'], noDelegation: true } as const;
const ACCOUNT_WRITE = { scopes: ['data:write'], noDelegation: true } as const;
const NOTE = 'Not with a delegated token (403): call it with your own (GET /api/v1/oauth/principal-token).';
const UserId = z.object({ user_id: z.string().describe('A managed user’s id') });

/** What the caller holds for a user: their token's scopes, narrowed to what the relation allows. */
function held(principal: Principal, allowed: readonly string[]): string[] {
  return principal.scopes.filter((s) => allowed.includes(s));
}

export const listUsersRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/users/',
    operationId: 'list_users',
    summary: 'You, your managed users and the athletes who shared with a team of yours',
    description:
      `${NOTE} Yourself first (with your token’s scopes), then your managed users (data:read, data:write and profile, as ` +
      'your token holds them), then the athletes who authorised a team you belong to (the scopes they granted, as your ' +
      'token holds them; over several teams, their union). `name` keeps the users whose display name (first and last ' +
      'name) contains it, ignoring case.',
    tags: ['users'],
    auth: ACCOUNT,
    query: z.object({
      include_managed: queryBoolean(true).describe('Include your managed users (default true)'),
      include_shared: queryBoolean(true).describe('Include the athletes who shared with your teams (default true)'),
      name: z.string().max(200).optional().describe('Only users whose display name contains this, ignoring case'),
    }),
    responses: { 200: { description: 'The users', schema: z.array(UserSummary) } },
  },
  async (ctx, { query }) => {
    const { db } = ctx.deps;
    const principal = ctx.state.principal!;
    const me = await findUserById(db, principal.userId);
    const users: UserSummary[] = [];
    if (me && nameMatches(query.name, me)) users.push(userSummary(me, principal.scopes));
    if (query.include_managed) {
      for (const u of await managedUsers(db, principal.userId))
        if (nameMatches(query.name, u)) users.push(userSummary(u, held(principal, MANAGED_SCOPES)));
    }
    if (query.include_shared) {
      for (const u of await sharedUsers(db, principal.userId))
        if (nameMatches(query.name, u)) users.push(userSummary(u, held(principal, u.scopes)));
    }
    ctx.body = users;
  },
);

export const createUserRoute = defineRoute(
  {
    method: 'post',
    path: '/api/v1/users/',
    operationId: 'create_managed_user',
    summary: 'Create a managed user: an account without a login, managed by you',
    description:
      `${NOTE} A child, a lab subject, a historical athlete: it has no email and no password, cannot sign in, and you act as ` +
      'it with a delegated token (POST /api/v1/oauth/delegated-token with its id as `sub`). Names: 1–100 characters (the last name may be null).',
    tags: ['users'],
    auth: ACCOUNT_WRITE,
    body: ManagedUserCreate,
    responses: { 201: { description: 'The managed user', schema: UserResponse } },
  },
  async (ctx, { body }) => {
    const user = await createManagedUser(ctx.deps.db, ctx.state.principal!.userId, {
      first_name: body.first_name,
      last_name: body.last_name ?? '',
    });
    ctx.status = 201;
    ctx.body = userResponse(user);
  },
);

export const getUserRoute = defineRoute(
  {
    method: 'get',
    path: '/api/v1/users/{user_id}',
    operationId: 'get_managed_user',
    summary: 'One of your managed users',
    description: `${NOTE} Managed users only: anyone else, yourself included, is 404 (use the list).`,
    tags: ['users'],
    auth: ACCOUNT,
    params: UserId,
    responses: { 200: { description: 'The managed user', schema: UserResponse }, 404: { description: 'Not one of your managed users' } },
  },
  async (ctx, { params }) => {
    const user = await findManagedUser(ctx.deps.db, ctx.state.principal!.userId, params.user_id);
    if (!user) throw new NotFound('Not one of your managed users');
    ctx.body = userResponse(user);
  },
);

export const updateUserRoute = defineRoute(
  {
    method: 'put',
    path: '/api/v1/users/{user_id}',
    operationId: 'update_managed_user',
    summary: 'Rename one of your managed users',
    description: `${NOTE} JSON or form-encoded (as SweatStack's client sends it); the fields left out are unchanged.`,
    tags: ['users'],
    auth: ACCOUNT_WRITE,
    params: UserId,
    body: ManagedUserUpdate,
    responses: { 200: { description: 'The managed user', schema: UserResponse }, 404: { description: 'Not one of your managed users' } },
  },
  async (ctx, { params, body }) => {
    const change = {
      ...(body.first_name !== undefined ? { first_name: body.first_name } : {}),
      ...(body.last_name !== undefined ? { last_name: body.last_name ?? '' } : {}),
    };
    const { db } = ctx.deps;
    const managerId = ctx.state.principal!.userId;
    const user = Object.keys(change).length
      ? await updateManagedUser(db, managerId, params.user_id, change)
      : await findManagedUser(db, managerId, params.user_id);
    if (!user) throw new NotFound('Not one of your managed users');
    ctx.body = userResponse(user);
  },
);

export const deleteUserRoute = defineRoute(
  {
    method: 'delete',
    path: '/api/v1/users/{user_id}',
    operationId: 'delete_managed_user',
    summary: 'Delete one of your managed users and all their data',
    description:
      `${NOTE} Every activity, trace, test, daily value and file of the user is removed, each deletion sent as its event ` +
      '(`activity_deleted`, `trace_deleted`, `test_deleted`); every delegated token for the user fails from the next request. ' +
      'Cannot be undone.',
    tags: ['users'],
    auth: ACCOUNT_WRITE,
    params: UserId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not one of your managed users' } },
  },
  async (ctx, { params }) => {
    if (!(await removeUserData(ctx.deps, ctx.state.principal!.userId, params.user_id))) throw new NotFound('Not one of your managed users');
    ctx.status = 204;
  },
);

export const userRoutes: Route[] = [listUsersRoute, createUserRoute, getUserRoute, updateUserRoute, deleteUserRoute];
