/** `user create`, `user list`, `token create`, `keys list`, `keys rotate`. */
import { randomBytes } from 'node:crypto';
import type { Config } from '../../lib/config.ts';
import type { Db } from '../../db/database.ts';
import { createUser, DuplicateEmailError, findUserByEmail, listUsers } from '../../db/users.ts';
import { listPublishedKeys } from '../../db/signing-keys.ts';
import { hashPassword, passwordProblem } from '../../api/services/auth/passwords.ts';
import { KeyStore } from '../../api/services/auth/keys.ts';
import { loadSecretBox } from '../../lib/secret-box.ts';
import { createPersonalToken } from '../../api/services/oauth/issue.ts';
import { parseScopes } from '../../api/services/auth/scopes.ts';
import { type Flags, print, required, UsageError } from './common.ts';

export async function userCreate(db: Db, flags: Flags, json: boolean) {
  const email = required(flags, 'email').toLowerCase();
  const first_name = required(flags, 'first-name');
  const last_name = required(flags, 'last-name');
  const generated = typeof flags.password !== 'string';
  const password = generated ? randomBytes(18).toString('base64url') : String(flags.password);
  const weak = passwordProblem(password, { email, names: [first_name, last_name] });
  if (weak) throw new UsageError(`--password: ${weak}`);
  try {
    const user = await createUser(db, { email, first_name, last_name, password_hash: await hashPassword(password) });
    print(
      json,
      { id: user.id, email: user.email, first_name, last_name, ...(generated ? { password } : {}) },
      `Created user ${user.email} (${user.id})${generated ? `\nPassword (shown once): ${password}` : ''}`,
    );
  } catch (err) {
    if (err instanceof DuplicateEmailError) throw new UsageError(`a user with email ${email} already exists`);
    throw err;
  }
}

export async function userList(db: Db, json: boolean) {
  const users = await listUsers(db);
  const rows = users.map((u) => ({
    id: u.id,
    email: u.email,
    first_name: u.first_name,
    last_name: u.last_name,
    created_at: u.created_at.toISOString(),
  }));
  print(
    json,
    rows,
    rows.length ? rows.map((u) => `${u.id}  ${u.email}  ${u.first_name} ${u.last_name}  ${u.created_at}`).join('\n') : 'No users.',
  );
}

export async function tokenCreate(db: Db, config: Config, flags: Flags, json: boolean) {
  const email = required(flags, 'user');
  const { scopes, unknown } = parseScopes(typeof flags.scopes === 'string' ? flags.scopes : 'data:read data:write profile');
  if (unknown.length) throw new UsageError(`--scopes: unknown scope ${unknown.join(', ')}`);
  if (!scopes.length) throw new UsageError('--scopes: give at least one scope');
  const user = await findUserByEmail(db, email);
  if (!user) throw new UsageError(`no user with email ${email}`);
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const label = typeof flags.label === 'string' && flags.label.trim() ? flags.label.trim().slice(0, 100) : 'Command line';
  const { grant, response } = await createPersonalToken(
    db,
    { issuer: config.BASE_URL, keys, now: () => new Date() },
    user.id,
    scopes,
    label,
  );
  print(
    json,
    { ...response, user_id: user.id, token_id: grant.id },
    `Personal token "${label}" for ${user.email} (scopes: ${response.scope}; shown once, revocable in Settings → Personal tokens).\n` +
      `Access token (expires in ${response.expires_in / 60} minutes):\n${response.access_token}\n` +
      `Refresh token (exchange at ${config.BASE_URL}/api/v1/oauth/token with grant_type=refresh_token):\n${response.refresh_token}`,
  );
}

export async function keysList(db: Db, config: Config, json: boolean) {
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const rows = (await listPublishedKeys(db, new Date(0))).map((k) => ({
    kid: k.kid,
    created_at: k.created_at.toISOString(),
    retired_at: k.retired_at?.toISOString() ?? null,
    active: k.retired_at === null,
  }));
  print(json, rows, rows.map((k) => `${k.kid}  created ${k.created_at}  ${k.active ? 'ACTIVE' : `retired ${k.retired_at}`}`).join('\n'));
}

export async function keysRotate(db: Db, config: Config, json: boolean) {
  const keys = new KeyStore(db, await loadSecretBox(config));
  await keys.init();
  const kid = await keys.rotate();
  print(json, { kid }, `New signing key ${kid} is active; the previous key verifies its tokens until they expire.`);
}
