import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { sql } from 'kysely';
import type * as Keys from '../../../api/services/auth/keys.ts';
import type * as Passwords from '../../../api/services/auth/passwords.ts';
import type * as Issue from '../../../api/services/oauth/issue.ts';
import type * as Activities from '../../../db/activities.ts';
import type * as AppMetadata from '../../../db/app-metadata.ts';
import type * as Applications from '../../../db/applications.ts';
import type * as Database from '../../../db/database.ts';
import type * as Grants from '../../../db/grants.ts';
import type * as Migrate from '../../../db/migrate.ts';
import type * as Sources from '../../../db/sources.ts';
import type * as Traces from '../../../db/traces.ts';
import type * as Users from '../../../db/users.ts';
import type * as Ingest from '../../../engine/ingest/ingest.ts';
import type * as SecretBox from '../../../lib/secret-box.ts';
import type { Tree } from '../row.ts';

/**
 * What the http family (./http.ts) needs around its rows, as benchHttp (bench/run.ts) makes it:
 * the tree's bench database, its tokens and its seeded history; the processes it measures; the
 * burst of requests that is one sample.
 */

/**
 * The tree's own bench database, `<DATABASE_URL's>_bench_<8 hex of the tree's root>`: the two
 * sides never seed or read each other's, and a tree finds its own again on the next run.
 */
export function benchDatabase(baseUrl: string, root: string): { url: string; name: string } {
  const url = new URL(baseUrl);
  const name = `${url.pathname.replace(/^\//, '')}_bench_${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

/** A fixed key sealing the database's signing keys, so that a later run (and the API) can read them. */
export function secretsKeyOf(name: string): string {
  return createHash('sha256').update(`tds compare http ${name}`).digest('base64');
}

/**
 * The database created and migrated by the tree's db/migrate.ts, its bench user (made once), a
 * personal token (profile, data:read), the "Bench coach" application (made once), the user's
 * history of `activities` (bench/activities-list.ts, stored by the tree's code; kept across runs)
 * and that application's token (data:read). Tokens are signed by the tree's key store for `issuer`.
 */
export async function prepareDatabase(
  tree: Tree,
  opts: { url: string; secretsKey: string | undefined; dataDir: string; issuer: string; activities: number },
): Promise<{ token: string; appToken: string; seedMs: number }> {
  const { ensureDatabase, migrateToLatest } = await tree.load<typeof Migrate>('db/migrate.ts');
  const { createDb } = await tree.load<typeof Database>('db/database.ts');
  const { createUser, findUserByEmail } = await tree.load<typeof Users>('db/users.ts');
  const { hashPassword } = await tree.load<typeof Passwords>('api/services/auth/passwords.ts');
  const { KeyStore } = await tree.load<typeof Keys>('api/services/auth/keys.ts');
  const { loadSecretBox } = await tree.load<typeof SecretBox>('lib/secret-box.ts');
  const { createPersonalToken, tokenResponse } = await tree.load<typeof Issue>('api/services/oauth/issue.ts');
  const { createApplication } = await tree.load<typeof Applications>('db/applications.ts');
  const { createGrant } = await tree.load<typeof Grants>('db/grants.ts');
  const product = {
    sources: await tree.load<typeof Sources>('db/sources.ts'),
    activities: await tree.load<typeof Activities>('db/activities.ts'),
    traces: await tree.load<typeof Traces>('db/traces.ts'),
    appMetadata: await tree.load<typeof AppMetadata>('db/app-metadata.ts'),
    ingest: await tree.load<typeof Ingest>('engine/ingest/ingest.ts'),
  };
  const { seedActivityList } = await import('../../activities-list.ts');

  await ensureDatabase(opts.url);
  const db = createDb(opts.url, 4);
  try {
    await migrateToLatest(db);
    const email = 'bench@example.com';
    const user =
      (await findUserByEmail(db, email)) ??
      (await createUser(db, { email, first_name: 'Bench', last_name: 'Mark', password_hash: await hashPassword('bench password 1') }));
    const keys = new KeyStore(db, await loadSecretBox({ SECRETS_KEY: opts.secretsKey, DATA_DIR: opts.dataDir }));
    await keys.init();
    const issuer = { issuer: opts.issuer, keys, now: () => new Date() };
    const { response } = await createPersonalToken(db, issuer, user.id, ['profile', 'data:read'], 'bench');
    const app =
      (await db
        .selectFrom('applications')
        .selectAll()
        .where('owner_id', '=', user.id)
        .where('name', '=', 'Bench coach')
        .executeTakeFirst()) ??
      (await createApplication(db, { owner_id: user.id, name: 'Bench coach', redirect_uris: ['https://coach.example/callback'] }));
    const t0 = performance.now();
    await seedActivityList(db, user.id, app.id, opts.activities, product);
    const seedMs = performance.now() - t0;
    const { grant } = await createGrant(db, { user_id: user.id, application_id: app.id, scopes: ['data:read'], withRefreshToken: false });
    // Each tree's database is its own, seeded at its own time and kept: fresh statistics and no dead
    // rows on both, rather than wherever autovacuum happened to be (tree-service.ts, `settle`).
    await sql`VACUUM ANALYZE`.execute(db);
    return { token: response.access_token, appToken: (await tokenResponse(issuer, grant)).access_token, seedMs };
  } finally {
    await db.destroy();
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  port: number;
  pid: number;
  stop(): Promise<void>;
}

/**
 * `node --import tsx <entry>` in `cwd` (the tree), as benchHttp's startChild: ready when it prints
 * `listening … <port>`. Killed with this process should it end first.
 */
export function startChild(entry: string, cwd: string, env: Record<string, string>): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const orphan = () => child.kill('SIGKILL');
  process.once('exit', orphan);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    process.off('exit', orphan);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      stop().finally(() => reject(new Error(`${entry} in ${cwd} did not say it was listening within 60 s`)));
    }, 60_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /listening (?:on http:\/\/127\.0\.0\.1:)?(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.resume();
        resolve({ port: Number(m[1]), pid: child.pid!, stop });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('exit', orphan);
      reject(new Error(`${entry} in ${cwd} exited (${signal ?? code})`));
    });
  });
}

/**
 * One sample of an http row: `requests` GETs of `url` over `connections` keep-alive connections
 * (the agent's, kept open from one sample to the next), each loop sending its next request when
 * its answer has been read; every answer must be 200.
 */
export async function burst(
  url: URL,
  headers: Record<string, string>,
  agent: http.Agent,
  requests: number,
  connections: number,
): Promise<void> {
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { agent, headers }, (res) => {
        res.resume();
        res.on('error', reject);
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`GET ${url.pathname}${url.search}: ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (sent++ < requests) await one();
    }),
  );
}
