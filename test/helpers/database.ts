import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { createDb } from '../../db/database.ts';
import { migrateToLatest, MIGRATIONS_DIR } from '../../db/migrate.ts';

/**
 * Each test file gets its own database, copied from a template that was migrated once. The
 * template's name carries a hash of the migrations, so a changed migration makes a new template.
 */
const TEST_DB_PREFIX = 'tds_test_';
const STALE_AFTER_SECONDS = 3 * 3600;

function templateName(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) {
    hash.update(file);
    hash.update(readFileSync(path.join(MIGRATIONS_DIR, file)));
  }
  return `tds_template_${hash.digest('hex').slice(0, 16)}`;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

export async function createTestDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  const template = templateName();
  const name = `${TEST_DB_PREFIX}${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  try {
    // One process at a time builds the template and copies it (a copy fails while another
    // session is connected to the template).
    await admin.query(`SELECT pg_advisory_lock(hashtext('tds_test_template'))`);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (!exists.rowCount) {
      const building = `${template}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(building)} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(building)}`);
      const db = createDb(withDatabase(serverUrl, building), 1);
      try {
        await migrateToLatest(db);
      } finally {
        await db.destroy();
      }
      await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(template)}`);
    }
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(template)}`);
    await dropStale(admin);
  } finally {
    await admin.query(`SELECT pg_advisory_unlock(hashtext('tds_test_template'))`).catch(() => {});
    await admin.end();
  }
  return {
    url: withDatabase(serverUrl, name),
    drop: async () => {
      const c = new pg.Client({ connectionString: withDatabase(serverUrl, 'postgres') });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/** Databases left behind by runs that were killed before their clean-up. */
async function dropStale(admin: pg.Client) {
  const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEST_DB_PREFIX}%`]);
  const cutoff = Date.now() / 1000 - STALE_AFTER_SECONDS;
  for (const { datname } of rows) {
    const created = Number(datname.slice(TEST_DB_PREFIX.length).split('_')[0]);
    if (created && created < cutoff)
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`).catch(() => {});
  }
}
