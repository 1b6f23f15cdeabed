import { z } from 'zod';
import { defineRoute } from '../../../http/route.ts';
import { NotFound } from '../../../services/errors.ts';
import { findUserById } from '../../../../db/users.ts';
import { findManagedUser } from '../../../../db/managed-users.ts';

export const UserInfo = z
  .object({
    sub: z.string().describe('The user id'),
    name: z.string(),
    given_name: z.string(),
    family_name: z.string(),
    email: z.email().nullable().describe('Null for a managed user (an account without a login), read by its manager'),
    registered_at: z.iso.datetime().describe('UTC instant the account was created'),
  })
  .meta({ id: 'UserInfo' });

export const userinfo = defineRoute(
  {
    method: ['get', 'post'],
    path: '/api/v1/oauth/userinfo',
    operationId: 'userinfo',
    summary: 'The signed-in user',
    description: 'Needs the `profile` scope.',
    tags: ['oauth'],
    auth: { scopes: ['profile'] },
    responses: { 200: { description: 'The user the token acts for', schema: UserInfo } },
  },
  async (ctx) => {
    const { userId, delegation } = ctx.state.principal!;
    // A managed user (no login) is read by its manager's delegated token: no email.
    const managed = delegation?.teamId === null ? await findManagedUser(ctx.deps.db, delegation.actorId, userId) : undefined;
    const user = managed ? { ...managed, email: null } : await findUserById(ctx.deps.db, userId);
    if (!user) throw new NotFound('User not found');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      sub: user.id,
      name: [user.first_name, user.last_name].filter(Boolean).join(' '),
      given_name: user.first_name,
      family_name: user.last_name,
      email: user.email,
      registered_at: user.created_at.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    } satisfies z.infer<typeof UserInfo>;
  },
);
