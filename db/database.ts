import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

/** Timestamps are written as Date (or left to defaults) and read as Date. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface UsersTable {
  id: Generated<string>;
  email: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface SessionsTable {
  id: Generated<string>;
  user_id: string;
  created_at: Timestamp;
  expires_at: ColumnType<Date, Date | string, Date | string>;
  user_agent: string | null;
}

export interface SigningKeysTable {
  kid: string;
  /** PKCS#8 PEM of the RSA private key. */
  private_key_pem: string;
  /** The public half as a JWK, ready for the JWKS. */
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  /** Set when another key replaces it for signing; it is still published until its tokens expire. */
  retired_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  signing_keys: SigningKeysTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Session = Selectable<SessionsTable>;
export type SigningKey = Selectable<SigningKeysTable>;

export type Db = Kysely<Database>;

export function createDb(url: string, poolSize = 10): Db {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, connectionTimeoutMillis: 5_000 });
  // An idle client losing its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
