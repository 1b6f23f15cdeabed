import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileMigrationProvider, Migrator, sql } from 'kysely';
import pg from 'pg';
import type { Db } from './database.ts';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Apply every pending migration (forward-only). Safe to run from several processes at once. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FileMigrationProvider({ fs, path, migrationFolder: MIGRATIONS_DIR }),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${reason}`.replace('  ', ' '));
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Create the database named in `url` when it does not exist yet, connecting to the server's
 * `postgres` database to do so. Lets `npm start` work on a fresh machine.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (err) {
      // Another process created it between our check and our CREATE.
      if ((err as { code?: string }).code !== '42P04') throw err;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

export async function ping(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
