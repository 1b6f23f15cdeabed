import { preparedQuery, type Db } from './database.ts';
import { isUuid } from '../lib/ids.ts';

/** What an access token is bound to (api/services/auth/tokens.ts): a grant, or a web session. */
export type Credential =
  | { kind: 'grant'; id: string; userId: string /** The token's client; null for a personal token. */; applicationId: string | null }
  | { kind: 'session'; id: string; userId: string; now: Date }
  /** A delegated token's delegation (db/delegations.ts): `actorId` acting as `userId`. */
  | { kind: 'delegation'; id: string; userId: string; actorId: string; applicationId: string | null; now: Date };

interface Row {
  kind: Credential['kind'];
  id: string;
  user_id: string;
  application_id: string | null;
  expires_at: Date | null;
  read_version: string;
  data_version: string;
  actor_id: string | null;
  team_id: string | null;
  allowed_scopes: string[] | null;
}

/** The user's versions, read with the credential's check: `read_version` (db/read-version.ts) and `data_version` (db/curves.ts). */
export interface UserVersions {
  readVersion: string;
  dataVersion: string;
  /** For a delegation: the team it goes through (null: the actor manages the user) and the scopes the athlete grants the team now (null: no limit beyond the token's). */
  delegation?: { teamId: string | null; allowedScopes: string[] | null };
}

interface Waiter {
  credential: Credential;
  resolve: (versions: UserVersions | undefined) => void;
  reject: (err: unknown) => void;
}

/** The checks asked for during the current turn of the event loop, per database. */
const pending = new WeakMap<Db, Waiter[]>();

/**
 * Checked on every request, never remembered: the token's grant (an application's authorization or
 * a personal token) must still exist for its user and its client, or its web session for its user
 * and not have expired at `now`. Answers the user's `read_version` (db/read-version.ts) and
 * `data_version` (db/curves.ts), so that a cached read (api/rest/activities/read-cache.ts) and a computed
 * answer (api/rest/activities/computed.ts) need no query of their own; undefined when the grant was
 * revoked, the session ended, or neither is ours.
 *
 * The checks asked for in one turn of the event loop go to PostgreSQL together, in one query sent
 * after the last of them was asked: each request is answered from a query that started after it
 * arrived, so it sees every revocation committed before it, and a server under load makes one round
 * trip for all the requests that arrived together instead of one each.
 */
export function liveCredentialVersions(db: Db, credential: Credential): Promise<UserVersions | undefined> {
  if (!isUuid(credential.id) || !isUuid(credential.userId)) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    let waiters = pending.get(db);
    if (!waiters) {
      pending.set(db, (waiters = []));
      setImmediate(() => void check(db));
    }
    waiters.push({ credential, resolve, reject });
  });
}

/**
 * The grants, sessions and delegations among the ids, with their users' read versions. A delegation
 * is returned only while it still allows something: its user not deleted, and either its actor still
 * manages the user (no team) or the user still authorises the team and the actor is still a member;
 * with its web session's expiry when it was made under one (a deleted grant or session deletes it).
 */
const LIVE_CREDENTIALS = `
  SELECT 'grant' AS kind, g.id, g.user_id, g.application_id, NULL::timestamptz AS expires_at, u.read_version, u.data_version,
         NULL::uuid AS actor_id, NULL::uuid AS team_id, NULL::text[] AS allowed_scopes
    FROM grants g JOIN users u ON u.id = g.user_id
   WHERE g.id = ANY($1::uuid[])
  UNION ALL
  SELECT 'session', s.id, s.user_id, NULL, s.expires_at, u.read_version, u.data_version, NULL, NULL, NULL
    FROM sessions s JOIN users u ON u.id = s.user_id
   WHERE s.id = ANY($2::uuid[])
  UNION ALL
  SELECT 'delegation', d.id, d.user_id, d.application_id, s.expires_at, u.read_version, u.data_version, d.actor_id, d.team_id, ta.scopes
    FROM delegations d
    JOIN users u ON u.id = d.user_id AND u.deleted_at IS NULL
    LEFT JOIN sessions s ON s.id = d.session_id
    LEFT JOIN team_authorizations ta ON ta.team_id = d.team_id AND ta.user_id = d.user_id
   WHERE d.id = ANY($3::uuid[])
     AND ((d.team_id IS NULL AND u.managed_by = d.actor_id)
          OR (ta.user_id IS NOT NULL
              AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = d.team_id AND m.user_id = d.actor_id)))`;

async function check(db: Db): Promise<void> {
  const waiters = pending.get(db)!;
  pending.delete(db);
  const ids = { grant: new Set<string>(), session: new Set<string>(), delegation: new Set<string>() };
  for (const { credential } of waiters) ids[credential.kind].add(credential.id.toLowerCase());
  let rows: Row[];
  try {
    rows = await preparedQuery<Row>(db, 'live_credentials_v2', LIVE_CREDENTIALS, [[...ids.grant], [...ids.session], [...ids.delegation]]);
  } catch (err) {
    for (const w of waiters) w.reject(err);
    return;
  }
  const found = new Map(rows.map((row) => [`${row.kind}:${row.id}`, row]));
  for (const { credential: c, resolve } of waiters) {
    const row = found.get(`${c.kind}:${c.id.toLowerCase()}`);
    if (row === undefined || !isLive(c, row)) {
      resolve(undefined);
      continue;
    }
    const versions: UserVersions = { readVersion: row.read_version, dataVersion: row.data_version };
    if (c.kind === 'delegation')
      versions.delegation = { teamId: row.team_id, allowedScopes: row.team_id === null ? null : (row.allowed_scopes ?? []) };
    resolve(versions);
  }
}

function isLive(c: Credential, row: Row): boolean {
  if (row.user_id !== c.userId) return false;
  switch (c.kind) {
    case 'grant':
      return row.application_id === c.applicationId;
    case 'session':
      return row.expires_at !== null && row.expires_at.getTime() > c.now.getTime();
    case 'delegation':
      return (
        row.actor_id === c.actorId &&
        row.application_id === c.applicationId &&
        (row.expires_at === null || row.expires_at.getTime() > c.now.getTime())
      );
  }
}
