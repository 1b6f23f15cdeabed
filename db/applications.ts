import { randomBytes } from 'node:crypto';
import { SEALED_PREFIX, type SecretBox } from '../lib/secret-box.ts';
import type { Application, ApplicationsTable, ClientSecret, Db } from './database.ts';
import type { Updateable } from 'kysely';
import { newSecret, SECRET_PREFIX, sha256 } from '../lib/secrets.ts';

export class SlugTakenError extends Error {
  constructor(readonly slug: string) {
    super(`the page slug ${slug} belongs to another application`);
  }
}

/** A fresh OAuth client id: 120 random bits, URL-safe. */
export function newClientId(): string {
  return randomBytes(15).toString('base64url');
}

export interface NewApplication {
  owner_id: string;
  name: string;
  description?: string | null;
  url?: string | null;
  image?: string | null;
  privacy_statement?: string | null;
  redirect_uris: string[];
  page_slug?: string | null;
}

export async function createApplication(db: Db, app: NewApplication): Promise<Application> {
  return withSlugCheck(app.page_slug, () =>
    db
      .insertInto('applications')
      .values({ id: newClientId(), ...app })
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

/**
 * A built-in application (no owner), created or brought up to date at start: its fields follow the
 * configuration (the redirect URI holds BASE_URL). Secrets, consents and grants are kept.
 */
export async function upsertBuiltinApplication(
  db: Db,
  app: Omit<NewApplication, 'owner_id' | 'page_slug'> & { id: string },
): Promise<void> {
  const { id, ...fields } = app;
  await db
    .insertInto('applications')
    .values({ id, owner_id: null, ...fields })
    .onConflict((oc) => oc.column('id').doUpdateSet({ owner_id: null, ...fields, updated_at: new Date() }))
    .execute();
}

/** The owner's applications, newest first. */
export function listOwnedApplications(db: Db, ownerId: string): Promise<Application[]> {
  return db.selectFrom('applications').selectAll().where('owner_id', '=', ownerId).orderBy('created_at', 'desc').orderBy('id').execute();
}

export function findApplication(db: Db, id: string): Promise<Application | undefined> {
  if (typeof id !== 'string' || id.length > 100) return Promise.resolve(undefined);
  return db.selectFrom('applications').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The application if `ownerId` owns it; another user's application is as absent as a missing one. */
export async function findOwnedApplication(db: Db, id: string, ownerId: string): Promise<Application | undefined> {
  const app = await findApplication(db, id);
  return app?.owner_id === ownerId ? app : undefined;
}

export function findApplicationBySlug(db: Db, slug: string): Promise<Application | undefined> {
  return db.selectFrom('applications').selectAll().where('page_slug', '=', slug).executeTakeFirst();
}

export type ApplicationChanges = Omit<Updateable<ApplicationsTable>, 'id' | 'owner_id' | 'created_at' | 'updated_at'>;

export async function updateApplication(db: Db, id: string, changes: ApplicationChanges): Promise<Application> {
  return withSlugCheck(changes.page_slug, () =>
    db
      .updateTable('applications')
      .set({ ...changes, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  );
}

export async function deleteApplication(db: Db, id: string): Promise<void> {
  await db.deleteFrom('applications').where('id', '=', id).execute();
}

/** The public directory: published applications, by name. */
export function listPublishedApplications(db: Db): Promise<Application[]> {
  return db.selectFrom('applications').selectAll().where('published', '=', true).orderBy('name').orderBy('id').execute();
}

async function withSlugCheck<T>(slug: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = err as { code?: string; constraint?: string };
    if (slug && e.code === '23505' && e.constraint?.includes('page_slug')) throw new SlugTakenError(slug);
    throw err;
  }
}

// Client secrets -------------------------------------------------------------------------------

/** Make a secret under `label`; the secret itself is returned here once and stored only hashed. */
export async function createClientSecret(db: Db, applicationId: string, label: string): Promise<{ secret: string; row: ClientSecret }> {
  const secret = newSecret(SECRET_PREFIX.clientSecret);
  const row = await db
    .insertInto('client_secrets')
    .values({ application_id: applicationId, label, secret_hash: sha256(secret), hint: secret.slice(-4) })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { secret, row };
}

export function listClientSecrets(db: Db, applicationId: string): Promise<ClientSecret[]> {
  return db.selectFrom('client_secrets').selectAll().where('application_id', '=', applicationId).orderBy('created_at', 'desc').execute();
}

export async function hasClientSecrets(db: Db, applicationId: string): Promise<boolean> {
  const row = await db.selectFrom('client_secrets').select('id').where('application_id', '=', applicationId).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Whether `secret` is one of the application's secrets; records its use. */
export async function verifyClientSecret(db: Db, applicationId: string, secret: string, now: Date): Promise<boolean> {
  const res = await db
    .updateTable('client_secrets')
    .set({ last_used_at: now })
    .where('application_id', '=', applicationId)
    .where('secret_hash', '=', sha256(secret))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function deleteClientSecret(db: Db, applicationId: string, secretId: string): Promise<boolean> {
  if (!/^[0-9a-f-]{36}$/i.test(secretId)) return false;
  const res = await db
    .deleteFrom('client_secrets')
    .where('application_id', '=', applicationId)
    .where('id', '=', secretId)
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

/** What a stored webhook secret is bound to (lib/secret-box.ts): its application. */
export const webhookSecretContext = (applicationId: string) => `applications.webhook_secret:${applicationId}`;

/** Seal the webhook secrets stored before sealing existed (each row only if it still holds that plaintext). */
export async function sealWebhookSecrets(db: Db, box: SecretBox): Promise<number> {
  const plain = await db
    .selectFrom('applications')
    .select(['id', 'webhook_secret'])
    .where('webhook_secret', 'is not', null)
    .where('webhook_secret', 'not like', `${SEALED_PREFIX}%`)
    .execute();
  for (const { id, webhook_secret } of plain) {
    await db
      .updateTable('applications')
      .set({ webhook_secret: box.seal(webhook_secret!, webhookSecretContext(id)) })
      .where('id', '=', id)
      .where('webhook_secret', '=', webhook_secret)
      .execute();
  }
  return plain.length;
}
