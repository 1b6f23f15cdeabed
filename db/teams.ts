import { sql } from 'kysely';
import type { Db, Team, TeamRole } from './database.ts';
import { isUuid } from '../lib/ids.ts';
import { newSecret, SECRET_PREFIX, sha256 } from '../lib/secrets.ts';

/**
 * Teams, their members (owners and coaches), the invitation links that make members, and the
 * athletes' authorisations of a team (docs/coaching.md). Who may do what is decided by the callers
 * (api/services/coaching/); these functions only read and write, each change in one statement or
 * one transaction.
 */

export interface TeamOfUser extends Team {
  role: TeamRole;
}

export interface TeamFields {
  name: string;
  description: string;
  url: string | null;
  image: string | null;
  privacy_statement: string | null;
}

export async function createTeam(db: Db, fields: TeamFields, ownerId: string): Promise<TeamOfUser> {
  return db.transaction().execute(async (tx) => {
    const team = await tx
      .insertInto('teams')
      .values({ ...fields, created_by: ownerId })
      .returningAll()
      .executeTakeFirstOrThrow();
    await tx.insertInto('team_members').values({ team_id: team.id, user_id: ownerId, role: 'owner' }).execute();
    return { ...team, role: 'owner' as const };
  });
}

/** The teams the user is a member of, with their role, by name. */
export function teamsOfMember(db: Db, userId: string): Promise<TeamOfUser[]> {
  return db
    .selectFrom('teams')
    .innerJoin('team_members as m', 'm.team_id', 'teams.id')
    .selectAll('teams')
    .select('m.role')
    .where('m.user_id', '=', userId)
    .orderBy('teams.name')
    .orderBy('teams.id')
    .execute();
}

/** The team with the user's role in it, or undefined when it does not exist or the user is no member. */
export async function teamOfMember(db: Db, teamId: string, userId: string): Promise<TeamOfUser | undefined> {
  if (!isUuid(teamId)) return undefined;
  return db
    .selectFrom('teams')
    .innerJoin('team_members as m', 'm.team_id', 'teams.id')
    .selectAll('teams')
    .select('m.role')
    .where('teams.id', '=', teamId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
}

export async function findTeam(db: Db, teamId: string): Promise<Team | undefined> {
  if (!isUuid(teamId)) return undefined;
  return db.selectFrom('teams').selectAll().where('id', '=', teamId).executeTakeFirst();
}

export async function updateTeam(db: Db, teamId: string, change: Partial<TeamFields>): Promise<Team> {
  return db
    .updateTable('teams')
    .set({ ...change, updated_at: sql`now()` as never })
    .where('id', '=', teamId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Deletes the team, its members, invitations and authorisations, and every delegation made through it. */
export async function deleteTeam(db: Db, teamId: string): Promise<void> {
  await db.deleteFrom('teams').where('id', '=', teamId).execute();
}

export interface TeamMember {
  user_id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  role: TeamRole;
  created_at: Date;
}

export function teamMembers(db: Db, teamId: string): Promise<TeamMember[]> {
  return db
    .selectFrom('team_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.user_id', 'u.first_name', 'u.last_name', 'u.email', 'm.role', 'm.created_at'])
    .where('m.team_id', '=', teamId)
    .orderBy('m.created_at')
    .execute();
}

/**
 * Removes a member (leaving, or removed by an owner); refused (false) when it would leave the team
 * without an owner. The delegations the member holds through the team stop at once (their check,
 * db/credentials.ts, requires the membership) and are deleted here too.
 */
export async function removeMember(db: Db, teamId: string, userId: string): Promise<'removed' | 'not_member' | 'last_owner'> {
  return db.transaction().execute(async (tx) => {
    const members = await tx.selectFrom('team_members').select(['user_id', 'role']).where('team_id', '=', teamId).forUpdate().execute();
    const member = members.find((m) => m.user_id === userId);
    if (!member) return 'not_member';
    if (member.role === 'owner' && members.filter((m) => m.role === 'owner').length === 1) return 'last_owner';
    await tx.deleteFrom('team_members').where('team_id', '=', teamId).where('user_id', '=', userId).execute();
    await tx.deleteFrom('delegations').where('team_id', '=', teamId).where('actor_id', '=', userId).execute();
    return 'removed';
  });
}

// Invitations ------------------------------------------------------------------------------------

export interface Invitation {
  id: string;
  role: TeamRole;
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

/** Where an invitation stands at `now`. */
export function invitationStatus(
  i: Pick<Invitation, 'used_at' | 'revoked_at' | 'expires_at'>,
  now: Date,
): 'open' | 'used' | 'expired' | 'revoked' {
  return i.used_at ? 'used' : i.revoked_at ? 'revoked' : i.expires_at <= now ? 'expired' : 'open';
}

/** A new invitation link's secret (returned once; stored as SHA-256). */
export async function createInvitation(
  db: Db,
  i: { teamId: string; role: TeamRole; createdBy: string; expiresAt: Date },
): Promise<{ invitation: Invitation; secret: string }> {
  const secret = newSecret(SECRET_PREFIX.teamInvitation);
  const invitation = await db
    .insertInto('team_invitations')
    .values({ team_id: i.teamId, role: i.role, created_by: i.createdBy, expires_at: i.expiresAt, secret_hash: sha256(secret) })
    .returning(['id', 'role', 'created_at', 'expires_at', 'used_at', 'revoked_at'])
    .executeTakeFirstOrThrow();
  return { invitation, secret };
}

export function teamInvitations(db: Db, teamId: string): Promise<Invitation[]> {
  return db
    .selectFrom('team_invitations')
    .select(['id', 'role', 'created_at', 'expires_at', 'used_at', 'revoked_at'])
    .where('team_id', '=', teamId)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
}

export async function revokeInvitation(db: Db, teamId: string, invitationId: string, now: Date): Promise<boolean> {
  if (!isUuid(invitationId)) return false;
  const res = await db
    .updateTable('team_invitations')
    .set({ revoked_at: now })
    .where('id', '=', invitationId)
    .where('team_id', '=', teamId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** The team an unused, unexpired, unrevoked invitation is for (no change), or undefined. */
export async function invitationTeam(db: Db, secret: string, now: Date): Promise<(Team & { role: TeamRole }) | undefined> {
  return db
    .selectFrom('team_invitations as i')
    .innerJoin('teams', 'teams.id', 'i.team_id')
    .selectAll('teams')
    .select('i.role')
    .where('i.secret_hash', '=', sha256(secret))
    .where('i.used_at', 'is', null)
    .where('i.revoked_at', 'is', null)
    .where('i.expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Uses an invitation: the user joins its team with its role (an existing member keeps the higher
 * role). Single use even when two requests race: the invitation is marked used by the one update that
 * finds it unused. Answers the team joined, or undefined when the link is unknown, used, expired or revoked.
 */
export async function acceptInvitation(db: Db, secret: string, userId: string, now: Date): Promise<Team | undefined> {
  return db.transaction().execute(async (tx) => {
    const used = await tx
      .updateTable('team_invitations')
      .set({ used_at: now, used_by: userId })
      .where('secret_hash', '=', sha256(secret))
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .returning(['team_id', 'role'])
      .executeTakeFirst();
    if (!used) return undefined;
    await tx
      .insertInto('team_members')
      .values({ team_id: used.team_id, user_id: userId, role: used.role })
      .onConflict((oc) =>
        oc.columns(['team_id', 'user_id']).doUpdateSet({
          role: sql<TeamRole>`CASE WHEN team_members.role = 'owner' THEN 'owner' ELSE excluded.role END`,
        }),
      )
      .execute();
    return tx.selectFrom('teams').selectAll().where('id', '=', used.team_id).executeTakeFirstOrThrow();
  });
}

// Authorisations ---------------------------------------------------------------------------------

/** The athlete authorises the team with `scopes` (replacing what they granted it before). */
export async function authorizeTeam(db: Db, teamId: string, userId: string, scopes: string[]): Promise<void> {
  await db
    .insertInto('team_authorizations')
    .values({ team_id: teamId, user_id: userId, scopes })
    .onConflict((oc) => oc.columns(['team_id', 'user_id']).doUpdateSet({ scopes, updated_at: sql`now()` }))
    .execute();
}

/** Withdraws the authorisation and deletes the delegations made through it (they fail at once anyway). */
export async function revokeTeamAuthorization(db: Db, teamId: string, userId: string): Promise<boolean> {
  if (!isUuid(teamId)) return false;
  return db.transaction().execute(async (tx) => {
    const res = await tx.deleteFrom('team_authorizations').where('team_id', '=', teamId).where('user_id', '=', userId).executeTakeFirst();
    await tx.deleteFrom('delegations').where('team_id', '=', teamId).where('user_id', '=', userId).execute();
    return Number(res.numDeletedRows) === 1;
  });
}

export interface AuthorizedTeam extends Team {
  scopes: string[];
  authorized_at: Date;
}

/** The teams the user authorised, with the scopes granted. */
export function authorizedTeams(db: Db, userId: string): Promise<AuthorizedTeam[]> {
  return db
    .selectFrom('team_authorizations as a')
    .innerJoin('teams', 'teams.id', 'a.team_id')
    .selectAll('teams')
    .select(['a.scopes', 'a.created_at as authorized_at'])
    .where('a.user_id', '=', userId)
    .orderBy('teams.name')
    .orderBy('teams.id')
    .execute();
}

/**
 * What `userId` grants the teams `memberId` belongs to (or only `teamId`), by team name: the teams a
 * delegation may go through (api/services/coaching/delegation.ts). A deleted user grants nothing.
 */
export function teamGrantsFor(db: Db, memberId: string, userId: string, teamId?: string): Promise<{ team_id: string; scopes: string[] }[]> {
  let q = db
    .selectFrom('team_authorizations as a')
    .innerJoin('team_members as m', (j) => j.onRef('m.team_id', '=', 'a.team_id').on('m.user_id', '=', memberId))
    .innerJoin('users as u', (j) => j.onRef('u.id', '=', 'a.user_id').on('u.deleted_at', 'is', null))
    .innerJoin('teams as t', 't.id', 'a.team_id')
    .select(['a.team_id', 'a.scopes'])
    .where('a.user_id', '=', userId);
  if (teamId !== undefined) q = q.where('a.team_id', '=', teamId);
  return q.orderBy('t.name').orderBy('t.id').execute();
}
