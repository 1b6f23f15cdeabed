import test from 'ava';
import { QueueEvents } from 'bullmq';
import { createSession } from '../db/sessions.ts';
import { activateKey } from '../db/signing-keys.ts';
import { createRedis } from '../workers/connections.ts';
import { QUEUE_NAMES } from '../workers/queues.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestApplication, createTestUser } from './helpers/users.ts';
import { createGrant } from '../db/grants.ts';
import { findSource, insertSource } from '../db/sources.ts';
import { tmpDir, writeFileAtomic } from '../lib/storage.ts';
import { sourceKey } from '../lib/object-store.ts';
import { objectFile } from '../lib/object-store-local.ts';
import { mkdirSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

test('the workers schedule housekeeping, which purges expired sessions, long-retired keys, old codes, spent grants, upload leftovers and finished old events, and requeues lost ingests', async (t) => {
  const { db, queues, config } = service.deps;
  const schedulers = await queues.housekeeping.getJobSchedulers();
  t.deepEqual(
    schedulers.map((s) => s.key),
    ['purge-expired'],
  );

  const user = await createTestUser(service);
  const now = Date.now();
  const expired = await createSession(db, { user_id: user.id, expires_at: new Date(now - 1000), user_agent: null });
  const live = await createSession(db, { user_id: user.id, expires_at: new Date(now + 3600_000), user_agent: null });
  await db
    .insertInto('signing_keys')
    .values({ kid: 'old-retired', private_key_pem: 'x', public_jwk: '{}', retired_at: new Date(now - 3600_000) })
    .execute();
  const app = await createTestApplication(service, user);
  const code = (c: string, expires: number) => ({
    code_hash: c,
    application_id: app.id,
    user_id: user.id,
    redirect_uri: 'https://app.example/callback',
    scopes: ['profile'],
    expires_at: new Date(expires),
  });
  await db
    .insertInto('authorization_codes')
    .values([code('old', now - 25 * 3600_000), code('recent', now - 3600_000)])
    .execute();
  const spent = await createGrant(db, { user_id: user.id, application_id: app.id, scopes: ['profile'], withRefreshToken: false });
  await db
    .updateTable('grants')
    .set({ created_at: new Date(now - 20 * 60_000) })
    .where('id', '=', spent.grant.id)
    .execute();
  const fresh = await createGrant(db, { user_id: user.id, application_id: app.id, scopes: ['profile'], withRefreshToken: false });
  const withRefresh = await createGrant(db, {
    user_id: user.id,
    application_id: app.id,
    scopes: ['offline_access'],
    withRefreshToken: true,
  });
  await db
    .updateTable('grants')
    .set({ created_at: new Date(now - 20 * 60_000) })
    .where('id', '=', withRefresh.grant.id)
    .execute();

  // A source stored 20 minutes ago whose ingest job was never queued, and an upload's leftovers.
  const csv = Buffer.from('timestamp,power\n2026-01-01T10:00:00Z,100\n2026-01-01T10:00:01Z,110\n');
  const lost = await insertSource(db, {
    user_id: user.id,
    type: 'csv',
    origin: 'manual_upload',
    filename: 'lost.csv',
    content_sha256: 'lost',
    size_bytes: csv.length,
    sport: 'rowing',
  });
  await writeFileAtomic(objectFile(config.DATA_DIR, sourceKey(user.id, lost.source.id, 'csv')), csv);
  await db
    .updateTable('sources')
    .set({ created_at: new Date(now - 20 * 60_000) })
    .where('id', '=', lost.source.id)
    .execute();
  const leftover = join(tmpDir(config.DATA_DIR), 'upload-old');
  mkdirSync(leftover, { recursive: true });
  utimesSync(leftover, new Date(now - 25 * 3600_000), new Date(now - 25 * 3600_000));
  mkdirSync(join(tmpDir(config.DATA_DIR), 'upload-in-flight'), { recursive: true });

  // Events: an old one whose delivery finished (deleted with its log), an old one still pending and a recent one (kept).
  const event = async (days: number, status: 'delivered' | 'pending') => {
    const e = await db
      .insertInto('events')
      .values({
        user_id: user.id,
        type: 'trace_created',
        resource_id: `r${days}${status}`,
        occurred_at: new Date(now - days * 86_400_000),
        fanned_out_at: new Date(now - days * 86_400_000),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('webhook_deliveries')
      .values({ event_id: e.id, application_id: app.id, endpoint: 'https://hooks.example/x', status })
      .execute();
    return e.id;
  };
  // Managed users deleted two hours ago: one whose deletion events all went out (removed), one with a delivery pending (kept).
  const deletedManaged = async (status: 'delivered' | 'pending') => {
    const m = await db
      .insertInto('users')
      .values({ first_name: 'M', last_name: status, managed_by: user.id, deleted_at: new Date(now - 2 * 3600_000) })
      .returning('id')
      .executeTakeFirstOrThrow();
    const e = await db
      .insertInto('events')
      .values({
        user_id: m.id,
        type: 'trace_deleted',
        resource_id: 'x',
        occurred_at: new Date(now - 2 * 3600_000),
        fanned_out_at: new Date(now),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('webhook_deliveries')
      .values({ event_id: e.id, application_id: app.id, endpoint: 'https://hooks.example/x', status })
      .execute();
    return m.id;
  };
  const goneManaged = await deletedManaged('delivered');
  // Delegations: one whose only token expired (deleted), one with a refresh token and one of a web session (kept).
  const delegation = async (fields: { refresh?: boolean; session?: boolean }) => {
    const actor = await createTestUser(service);
    const managed = await db
      .insertInto('users')
      .values({ first_name: 'D', last_name: 'x', managed_by: actor.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    const grant = fields.session
      ? undefined
      : await createGrant(db, { user_id: actor.id, application_id: null, scopes: ['data:read'], withRefreshToken: false });
    const session = fields.session
      ? await createSession(db, { user_id: actor.id, expires_at: new Date(now + 3600_000), user_agent: null })
      : undefined;
    const row = await db
      .insertInto('delegations')
      .values({
        actor_id: actor.id,
        user_id: managed.id,
        team_id: null,
        grant_id: grant?.grant.id ?? null,
        session_id: session?.id ?? null,
        application_id: null,
        scopes: ['data:read'],
        refresh_token_hash: fields.refresh ? `hash-${actor.id}` : null,
        created_at: new Date(now - 20 * 60_000),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };
  const spentDelegation = await delegation({});
  const keptDelegations = [await delegation({ refresh: true }), await delegation({ session: true })];
  const waitingManaged = await deletedManaged('pending');
  const oldDone = await event(31, 'delivered');
  const oldPending = await event(31, 'pending');
  const recent = await event(2, 'delivered');

  const connection = createRedis(config.REDIS_URL, 'worker');
  const events = new QueueEvents(QUEUE_NAMES.housekeeping, { connection, prefix: config.QUEUE_PREFIX });
  try {
    await events.waitUntilReady();
    const job = await queues.housekeeping.add('purge-expired', { task: 'purge-expired' });
    const result = await job.waitUntilFinished(events, 15_000);
    t.deepEqual(result, {
      objectDeletions: 0,
      abortedUploads: 0,
      columnSweeps: 0,
      trainingLoads: 0,
      sessions: 1,
      signingKeys: 1,
      codes: 1,
      grants: 1,
      delegations: 1,
      requeuedSources: 1,
      failedSources: 0,
      requeuedBackfills: 0,
      failedBackfills: 0,
      completedBackfills: 0,
      temporaryFiles: 1,
      events: 1,
      deletedUsers: 1,
    });
    t.deepEqual(
      (await db.selectFrom('users').select('id').where('id', 'in', [goneManaged, waitingManaged]).execute()).map((u) => u.id),
      [waitingManaged],
    );
    t.deepEqual(
      (
        await db
          .selectFrom('delegations')
          .select('id')
          .where('id', 'in', [spentDelegation, ...keptDelegations])
          .execute()
      )
        .map((d) => d.id)
        .sort(),
      [...keptDelegations].sort(),
    );
    const kept = (await db.selectFrom('events').select('id').where('id', 'in', [oldDone, oldPending, recent]).execute())
      .map((e) => e.id)
      .sort();
    t.deepEqual(kept, [oldPending, recent].sort());
    t.is((await db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', oldDone).execute()).length, 0);
    t.deepEqual(readdirSync(tmpDir(config.DATA_DIR)), ['upload-in-flight']);
    const deadline = Date.now() + 30_000;
    while ((await findSource(db, lost.source.id))?.status === 'processing' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    t.is((await findSource(db, lost.source.id))?.status, 'processed', 'the lost source was ingested');
    t.deepEqual(
      (await db.selectFrom('authorization_codes').select('code_hash').execute()).map((c) => c.code_hash),
      ['recent'],
    );
    const grants = (await db.selectFrom('grants').select('id').where('user_id', '=', user.id).execute()).map((g) => g.id).sort();
    t.deepEqual(grants, [fresh.grant.id, withRefresh.grant.id].sort());
    const left = await db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute();
    t.deepEqual(
      left.map((s) => s.id),
      [live.id],
    );
    t.not(left[0]?.id, expired.id);
    t.is(await db.selectFrom('signing_keys').select('kid').where('kid', '=', 'old-retired').executeTakeFirst(), undefined);
    // The active key is never purged.
    t.truthy(await db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).executeTakeFirst());

    // Idempotent: a second run deletes nothing more.
    const again = await (await queues.housekeeping.add('purge-expired', { task: 'purge-expired' })).waitUntilFinished(events, 15_000);
    t.deepEqual(again, {
      objectDeletions: 0,
      abortedUploads: 0,
      columnSweeps: 0,
      trainingLoads: 0,
      sessions: 0,
      signingKeys: 0,
      codes: 0,
      grants: 0,
      delegations: 0,
      requeuedSources: 0,
      failedSources: 0,
      requeuedBackfills: 0,
      failedBackfills: 0,
      completedBackfills: 0,
      temporaryFiles: 0,
      events: 0,
      deletedUsers: 0,
    });
  } finally {
    await events.close();
    await connection.quit();
  }
});

test('a job with invalid data fails without retrying', async (t) => {
  const { queues, config } = service.deps;
  const connection = createRedis(config.REDIS_URL, 'worker');
  const events = new QueueEvents(QUEUE_NAMES.housekeeping, { connection, prefix: config.QUEUE_PREFIX });
  try {
    await events.waitUntilReady();
    const job = await queues.housekeeping.add('bad', { task: 'drop-tables' } as never, { attempts: 3 });
    await t.throwsAsync(job.waitUntilFinished(events, 15_000), { message: /invalid job data/ });
    const state = await queues.housekeeping.getJob(job.id!);
    t.is(state?.attemptsMade, 1);
  } finally {
    await events.close();
    await connection.quit();
  }
});

// Serial: it briefly leaves the database with no active key.
test.serial('two processes creating the first key at once leave exactly one active key', async (t) => {
  const { db } = service.deps;
  await db.updateTable('signing_keys').set({ retired_at: new Date() }).where('retired_at', 'is', null).execute();
  const results = await Promise.all(
    ['race-a', 'race-b', 'race-c'].map((kid) => activateKey(db, { kid, private_key_pem: 'x', public_jwk: {} }, { onlyIfNoneActive: true })),
  );
  t.is(results.filter(Boolean).length, 1, 'exactly one of them created a key');
  const active = await db.selectFrom('signing_keys').select('kid').where('retired_at', 'is', null).execute();
  t.is(active.length, 1);
  t.true(active[0]!.kid.startsWith('race-'));
  // With a key active, a further attempt changes nothing.
  t.false(await activateKey(db, { kid: 'race-late', private_key_pem: 'x', public_jwk: {} }, { onlyIfNoneActive: true }));
});
