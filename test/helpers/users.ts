import { randomBytes } from 'node:crypto';
import type { User } from '../../db/database.ts';
import { createUser } from '../../db/users.ts';
import { hashPassword } from '../../api/auth/passwords.ts';
import { mintAccessToken } from '../../api/auth/tokens.ts';
import type { Scope } from '../../api/auth/scopes.ts';
import type { TestService } from './service.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

export async function createTestUser(service: TestService, fields: Partial<Pick<User, 'email' | 'first_name' | 'last_name'>> = {}) {
  return createUser(service.deps.db, {
    email: fields.email ?? `user-${randomBytes(4).toString('hex')}@example.com`,
    first_name: fields.first_name ?? 'Grace',
    last_name: fields.last_name ?? 'Hopper',
    password_hash: await hashPassword(TEST_PASSWORD),
  });
}

/** A personal access token (no aud) with the given scopes. */
export async function tokenFor(service: TestService, user: User, scopes: Scope[], aud?: string): Promise<string> {
  const { token } = await mintAccessToken(service.deps.tokens, { sub: user.id, scopes, ...(aud ? { aud } : {}) });
  return token;
}
