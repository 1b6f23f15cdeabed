import { randomBytes } from 'node:crypto';
import type { Application, User } from '../../db/database.ts';
import { createUser } from '../../db/users.ts';
import { hashPassword } from '../../api/services/auth/passwords.ts';
import { createPersonalToken, tokenResponse } from '../../api/services/oauth/issue.ts';
import { createGrant } from '../../db/grants.ts';
import { createApplication, type NewApplication } from '../../db/applications.ts';
import type { Scope } from '../../api/services/auth/scopes.ts';
import type { TestService } from './service.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

/**
 * TEST_PASSWORD's hash, computed once per test process and shared by the users made here (scrypt at
 * the product's cost takes about 0.2 s of CPU; hundreds of users would spend minutes on it). Sign-in
 * still verifies it in full; sign-up, tested on its own, hashes each password with its own salt.
 */
let testPasswordHash: Promise<string> | undefined;

export async function createTestUser(service: TestService, fields: Partial<Pick<User, 'email' | 'first_name' | 'last_name'>> = {}) {
  testPasswordHash ??= hashPassword(TEST_PASSWORD);
  return createUser(service.deps.db, {
    email: fields.email ?? `user-${randomBytes(4).toString('hex')}@example.com`,
    first_name: fields.first_name ?? 'Grace',
    last_name: fields.last_name ?? 'Hopper',
    password_hash: await testPasswordHash,
  });
}

/**
 * An access token with the given scopes: a personal token (no aud), or, with `aud`, an application's
 * token under a grant for that (existing) application.
 */
export async function tokenFor(service: TestService, user: User, scopes: Scope[], aud?: string): Promise<string> {
  if (!aud) return (await createPersonalToken(service.deps.db, service.deps.tokens, user.id, scopes, 'test')).response.access_token;
  const { grant } = await createGrant(service.deps.db, { user_id: user.id, application_id: aud, scopes, withRefreshToken: false });
  return (await tokenResponse(service.deps.tokens, grant)).access_token;
}

/** An application owned by `owner` (created straight in the database), optionally with webhook endpoints and secret. */
export async function createTestApplication(
  service: TestService,
  owner: User,
  fields: Partial<NewApplication> & { webhook_endpoints?: string[]; webhook_secret?: string | null } = {},
): Promise<Application> {
  const { webhook_endpoints, webhook_secret, ...rest } = fields;
  const app = await createApplication(service.deps.db, {
    owner_id: owner.id,
    name: 'Test app',
    redirect_uris: ['https://app.example/callback'],
    ...rest,
  });
  if (webhook_endpoints === undefined && webhook_secret === undefined) return app;
  return service.deps.db
    .updateTable('applications')
    .set({ ...(webhook_endpoints ? { webhook_endpoints } : {}), ...(webhook_secret !== undefined ? { webhook_secret } : {}) })
    .where('id', '=', app.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A new user and a personal token of theirs with `scopes` (default: read and write their data). */
export async function testAthlete(
  service: TestService,
  scopes: Scope[] = ['data:read', 'data:write'],
): Promise<{ user: User; token: string }> {
  const user = await createTestUser(service);
  return { user, token: await tokenFor(service, user, scopes) };
}
