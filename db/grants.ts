import { sql } from 'kysely';
import type { AuthorizationCode, Consent, Db, Grant } from './database.ts';
import { isUuid } from '../lib/ids.ts';
import { newSecret, SECRET_PREFIX, sha256 } from '../lib/secrets.ts';

// Consents ---------------------------------------------------------------------------------------

export function findConsent(db: Db, userId: string, applicationId: string): Promise<Consent | undefined> {
  return db.selectFrom('consents').selectAll().where('user_id', '=', userId).where('application_id', '=', applicationId).executeTakeFirst();
}

/** Record consent to `scopes`, adding to what the user granted the application before. */
export async function recordConsent(db: Db, userId: string, applicationId: string, scopes: string[]): Promise<void> {
  await db
    .insertInto('consents')
    .values({ user_id: userId, application_id: applicationId, scopes })
    .onConflict((oc) =>
      oc.columns(['user_id', 'application_id']).doUpdateSet({
        scopes: sql<string[]>`ARRAY(SELECT DISTINCT unnest(consents.scopes || excluded.scopes) ORDER BY 1)`,
        updated_at: sql`now()`,
      }),
    )
    .execute();
}

export interface ConnectedApplication {
  application_id: string;
  name: string;
  image: string | null;
  scopes: string[];
  created_at: Date;
  updated_at: Date;
}

/** The applications a user has authorized, most recently authorized first. */
export function listConnectedApplications(db: Db, userId: string): Promise<ConnectedApplication[]> {
  return db
    .selectFrom('consents')
    .innerJoin('applications', 'applications.id', 'consents.application_id')
    .select([
      'consents.application_id',
      'applications.name',
      'applications.image',
      'consents.scopes',
      'consents.created_at',
      'consents.updated_at',
    ])
    .where('consents.user_id', '=', userId)
    .orderBy('consents.updated_at', 'desc')
    .execute();
}

/** Withdraw consent: the consent row and every grant (refresh token) of the pair. Returns the grant ids. */
export async function deleteConsent(db: Db, userId: string, applicationId: string): Promise<{ found: boolean; grantIds: string[] }> {
  return db.transaction().execute(async (tx) => {
    const res = await tx
      .deleteFrom('consents')
      .where('user_id', '=', userId)
      .where('application_id', '=', applicationId)
      .executeTakeFirst();
    const grants = await tx
      .deleteFrom('grants')
      .where('user_id', '=', userId)
      .where('application_id', '=', applicationId)
      .returning('id')
      .execute();
    return { found: Number(res.numDeletedRows) === 1, grantIds: grants.map((g) => g.id) };
  });
}

// Grants -----------------------------------------------------------------------------------------

/**
 * A grant for an application (from a code) or a personal token (application null). A refresh token
 * is made when asked; it is returned here once and stored hashed.
 */
export async function createGrant(
  db: Db,
  g: {
    user_id: string;
    application_id: string | null;
    scopes: string[];
    label?: string | null;
    withRefreshToken: boolean;
    clientAuthenticated?: boolean;
  },
): Promise<{ grant: Grant; refreshToken: string | undefined }> {
  const refreshToken = g.withRefreshToken ? newSecret(SECRET_PREFIX.refreshToken) : undefined;
  const grant = await db
    .insertInto('grants')
    .values({
      user_id: g.user_id,
      application_id: g.application_id,
      scopes: g.scopes,
      label: g.label ?? null,
      refresh_token_hash: refreshToken ? sha256(refreshToken) : null,
      client_authenticated: g.clientAuthenticated ?? false,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { grant, refreshToken };
}

export function findGrantByRefreshToken(db: Db, refreshToken: string): Promise<Grant | undefined> {
  return db.selectFrom('grants').selectAll().where('refresh_token_hash', '=', sha256(refreshToken)).executeTakeFirst();
}

export function findGrant(db: Db, id: string): Promise<Grant | undefined> {
  if (!isUuid(id)) return Promise.resolve(undefined);
  return db.selectFrom('grants').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchGrant(db: Db, id: string, now: Date): Promise<void> {
  await db.updateTable('grants').set({ last_used_at: now }).where('id', '=', id).execute();
}

export async function deleteGrant(db: Db, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const res = await db.deleteFrom('grants').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** A user's personal tokens, newest first. */
export function listPersonalTokens(db: Db, userId: string): Promise<Grant[]> {
  return db
    .selectFrom('grants')
    .selectAll()
    .where('user_id', '=', userId)
    .where('application_id', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
}

// Authorization codes ----------------------------------------------------------------------------

export const CODE_TTL_SECONDS = 60;

export async function createAuthorizationCode(
  db: Db,
  c: Omit<AuthorizationCode, 'code_hash' | 'used_at' | 'grant_id' | 'created_at' | 'expires_at'>,
  now: Date,
): Promise<string> {
  const code = newSecret(SECRET_PREFIX.code);
  await db
    .insertInto('authorization_codes')
    .values({ ...c, code_hash: sha256(code), expires_at: new Date(now.getTime() + CODE_TTL_SECONDS * 1000) })
    .execute();
  return code;
}

export function findAuthorizationCode(db: Db, code: string): Promise<AuthorizationCode | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', sha256(code)).executeTakeFirst();
}

/** Mark the code used; false when another request used it first (exactly one exchange wins). */
export async function claimAuthorizationCode(db: Db, codeHash: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('authorization_codes')
    .set({ used_at: now })
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function linkCodeToGrant(db: Db, codeHash: string, grantId: string): Promise<void> {
  await db.updateTable('authorization_codes').set({ grant_id: grantId }).where('code_hash', '=', codeHash).execute();
}

/** Codes are kept a while after expiry so that a late replay is still recognised and revokes its grant. */
export async function deleteExpiredCodes(db: Db, now: Date): Promise<number> {
  const res = await db
    .deleteFrom('authorization_codes')
    .where('expires_at', '<', new Date(now.getTime() - 24 * 3600_000))
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * Grants that issued no refresh token are needed only while their access tokens can be valid;
 * after that the row is dead weight. `before` is now minus the access token lifetime.
 */
export async function deleteSpentGrants(db: Db, before: Date): Promise<number> {
  const res = await db.deleteFrom('grants').where('refresh_token_hash', 'is', null).where('created_at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}
