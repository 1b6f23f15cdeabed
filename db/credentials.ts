import { preparedQuery, type Db } from './database.ts';
import { isUuid } from '../lib/ids.ts';

/** What an access token is bound to (api/services/auth/tokens.ts): a grant, or a web session. */
export type Credential =
  | { kind: 'grant'; id: string; userId: string /** The token's client; null for a personal token. */; applicationId: string | null }
  | { kind: 'session'; id: string; userId: string; now: Date };

interface Row {
  kind: 'grant' | 'session';
  id: string;
  user_id: string;
  application_id: string | null;
  expires_at: Date | null;
  read_version: string;
  data_version: string;
}

/** The user's versions, read with the credential's check: `read_version` (db/read-version.ts) and `data_version` (db/curves.ts). */
export interface UserVersions {
  readVersion: string;
  dataVersion: string;
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

/** The grants and the sessions among the ids, with their users' read versions. */
const LIVE_CREDENTIALS = `
  SELECT 'grant' AS kind, g.id, g.user_id, g.application_id, NULL::timestamptz AS expires_at, u.read_version, u.data_version
    FROM grants g JOIN users u ON u.id = g.user_id
   WHERE g.id = ANY($1::uuid[])
  UNION ALL
  SELECT 'session', s.id, s.user_id, NULL, s.expires_at, u.read_version, u.data_version
    FROM sessions s JOIN users u ON u.id = s.user_id
   WHERE s.id = ANY($2::uuid[])`;

async function check(db: Db): Promise<void> {
  const waiters = pending.get(db)!;
  pending.delete(db);
  const ids = { grant: new Set<string>(), session: new Set<string>() };
  for (const { credential } of waiters) ids[credential.kind].add(credential.id.toLowerCase());
  let rows: Row[];
  try {
    rows = await preparedQuery<Row>(db, 'live_credentials', LIVE_CREDENTIALS, [[...ids.grant], [...ids.session]]);
  } catch (err) {
    for (const w of waiters) w.reject(err);
    return;
  }
  const found = new Map(rows.map((row) => [`${row.kind}:${row.id}`, row]));
  for (const { credential: c, resolve } of waiters) {
    const row = found.get(`${c.kind}:${c.id.toLowerCase()}`);
    const live =
      row !== undefined &&
      row.user_id === c.userId &&
      (c.kind === 'grant' ? row.application_id === c.applicationId : row.expires_at !== null && row.expires_at.getTime() > c.now.getTime());
    resolve(live ? { readVersion: row.read_version, dataVersion: row.data_version } : undefined);
  }
}
