import { z } from 'zod';
import { Scope } from '../auth/scopes.ts';
import type { Team, TeamRole } from '../../../db/database.ts';
import type { ManagedUser } from '../../../db/managed-users.ts';

/**
 * Users, teams and delegation as clients see them (docs/coaching.md), in the shapes of SweatStack's
 * Python client (its UserSummary, UserResponse, TeamResponse, AuthorizedTeamResponse).
 */

/** What an athlete may grant a team, and a manager holds for a managed user. */
export const TEAM_SCOPES = ['data:read', 'data:write'] as const satisfies readonly Scope[];
export const MANAGED_SCOPES = ['data:read', 'data:write', 'profile'] as const satisfies readonly Scope[];

const Name = z.string().trim().min(1).max(100);
const OptionalName = z.string().trim().max(100);

export const UserSummary = z
  .object({
    id: z.uuid(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    display_name: z.string().describe('First and last name, as the user list and its `name` filter read it'),
    is_managed: z.boolean().describe('A managed user: no login, managed by the user who created it'),
    scopes: z
      .array(Scope)
      .describe('What the caller holds for this user: their own token’s scopes for themself, what a team was granted for a shared user'),
  })
  .meta({ id: 'UserSummary' });
export type UserSummary = z.infer<typeof UserSummary>;

export const UserResponse = z
  .object({
    id: z.uuid(),
    first_name: z.string().nullable(),
    last_name: z.string().nullable(),
    display_name: z.string(),
    is_managed: z.boolean(),
    admin: z.boolean().describe('Always false: the service has no administrators'),
    registered_at: z.string().describe('When the account was made (UTC `Z`)'),
  })
  .meta({ id: 'UserResponse' });
export type UserResponse = z.infer<typeof UserResponse>;

export const ManagedUserCreate = z
  .object({ first_name: Name, last_name: OptionalName.nullable().optional() })
  .meta({ id: 'ManagedUserCreate' });

export const ManagedUserUpdate = z
  .object({ first_name: Name.optional(), last_name: OptionalName.nullable().optional() })
  .describe('JSON or form-encoded; fields left out are unchanged')
  .meta({ id: 'ManagedUserUpdate' });

export function displayName(u: { first_name: string; last_name: string }): string {
  return [u.first_name, u.last_name].filter(Boolean).join(' ');
}

export function userSummary(
  u: Pick<ManagedUser, 'id' | 'first_name' | 'last_name' | 'managed_by'>,
  scopes: readonly string[],
): UserSummary {
  return {
    id: u.id,
    first_name: u.first_name || null,
    last_name: u.last_name || null,
    display_name: displayName(u),
    is_managed: u.managed_by !== null,
    scopes: scopes.filter((s): s is Scope => Scope.safeParse(s).success),
  };
}

export function userResponse(u: ManagedUser): UserResponse {
  return {
    id: u.id,
    first_name: u.first_name || null,
    last_name: u.last_name || null,
    display_name: displayName(u),
    is_managed: u.managed_by !== null,
    admin: false,
    registered_at: u.created_at.toISOString(),
  };
}

/** A case-insensitive substring of the display name (the client filters again the same way). */
export function nameMatches(filter: string | undefined, u: { first_name: string; last_name: string }): boolean {
  return filter === undefined || displayName(u).toLowerCase().includes(filter.toLowerCase());
}

const HttpsUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .nullable()
  .optional();

export const TeamCreate = z
  .object({
    name: Name,
    description: z.string().trim().max(2000).optional(),
    url: HttpsUrl.describe('The team’s site; the service’s address when unset'),
    image: HttpsUrl.describe('The team’s image; the service’s icon when unset'),
    privacy_statement: HttpsUrl.describe('The team’s privacy statement; the service’s when unset'),
  })
  .meta({ id: 'TeamCreate' });
export const TeamUpdate = TeamCreate.partial().meta({ id: 'TeamUpdate' });

const TeamBase = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  url: z.string(),
  image: z.string(),
  privacy_statement: z.string(),
});

export const TeamResponse = TeamBase.extend({
  role: z
    .enum(['owner', 'member'])
    .nullable()
    .describe('Your role: `owner` (manages the team, its members and invitations) or `member` (a coach)'),
}).meta({ id: 'TeamResponse' });
export type TeamResponse = z.infer<typeof TeamResponse>;

export const AuthorizedTeamResponse = TeamBase.extend({
  scopes: z.array(Scope).describe('What you granted the team'),
}).meta({ id: 'AuthorizedTeamResponse' });

function teamBase(team: Team, baseUrl: string): z.infer<typeof TeamBase> {
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    url: team.url ?? baseUrl,
    image: team.image ?? `${baseUrl}/favicon.ico`,
    privacy_statement: team.privacy_statement ?? `${baseUrl}/privacy/client-side`,
  };
}

export function teamResponse(team: Team & { role?: TeamRole }, baseUrl: string): TeamResponse {
  return { ...teamBase(team, baseUrl), role: team.role === undefined ? null : team.role === 'owner' ? 'owner' : 'member' };
}

export function authorizedTeamResponse(team: Team & { scopes: string[] }, baseUrl: string): z.infer<typeof AuthorizedTeamResponse> {
  return { ...teamBase(team, baseUrl), scopes: team.scopes.filter((s): s is Scope => Scope.safeParse(s).success) };
}

export const AuthorizeTeam = z
  .object({
    scopes: z
      .array(z.string())
      .min(1)
      .max(10)
      .describe('`data:read`, and `data:write` to let the team write too; other scopes are refused'),
  })
  .meta({ id: 'AuthorizeTeam' });

export const DelegatedTokenRequest = z
  .object({
    sub: z.string().max(100).describe('The user to act as: one of your managed users, or an athlete who authorised a team you belong to'),
    team_id: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .describe('Through this team; without it, your managed user, or the team that grants the most'),
    scopes: z
      .array(z.string().max(100))
      .max(20)
      .nullable()
      .optional()
      .describe('At most these; scopes not granted are dropped, not an error'),
  })
  .meta({ id: 'DelegatedTokenRequest' });

/** Where an invitation link leads: the page that shows the team and joins it (its secret in the path). */
export function invitationUrl(baseUrl: string, secret: string): string {
  return `${baseUrl}/teams/join/${secret}`;
}
