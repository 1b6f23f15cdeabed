import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Job } from 'bullmq';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { upload, uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';
import { buildActivityFit } from './helpers/fit-builder.ts';
import { leanDecodeFit } from '../engine/ingest/fit-records.ts';
import { IngestError } from '../engine/ingest/recording.ts';
import { MAX_ACTIVITY_SECONDS } from '../engine/ingest/limits.ts';
import { ingestProcessor } from '../workers/ingest.ts';
import { createEnginePool } from '../engine/pool.ts';
import { createSampleStore } from '../engine/samples/sample-file.ts';
import { createLogger } from '../lib/log.ts';

/**
 * Issue 16, abuse: an activity is bounded in length (8 days on the grid) and in records (4 per
 * second of that), and a file's parse has a deadline (INGEST_TIMEOUT_MS). Each fails on its own
 * with a clear code; the service stays free for other files.
 */
let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const csv = (rows: string[]) => new TextEncoder().encode(['timestamp,power', ...rows].join('\n') + '\n');

test('an activity spanning more than 8 days fails with activity_too_long; a multi-day event is stored', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const day = 86_400_000;
  const start = Date.UTC(2024, 0, 1);
  const at = (ms: number) => new Date(ms).toISOString();
  const [tooLong, event] = await uploadAndWait(
    service,
    token,
    [
      { name: 'nine-days.csv', bytes: csv([`${at(start)},100`, `${at(start + 9 * day)},100`]) },
      { name: 'three-days.csv', bytes: csv([`${at(start)},100`, `${at(start + day)},200`, `${at(start + 3 * day)},100`]) },
    ],
    { sport: 'cycling' },
  );
  t.is(tooLong.status, 'failed');
  t.is(tooLong.error?.code, 'activity_too_long', JSON.stringify(tooLong));
  t.is(event.status, 'processed', JSON.stringify(event));
  const activity = (await (
    await fetch(`${service.url}/api/v1/activities/${event.activity_ids[0]}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { start: string; end: string };
  t.is(new Date(activity.end).getTime() - new Date(activity.start).getTime(), 3 * day + 1000, 'the whole event, its last second included');
  t.is(MAX_ACTIVITY_SECONDS, 8 * 86_400, 'the documented limit');
});

test('the lean FIT decoder stops at the record limit with too_many_samples', (t) => {
  const bytes = buildActivityFit({ sessions: [{ sport: 'cycling', start: new Date(Date.UTC(2024, 0, 1)), seconds: 600 }] });
  t.truthy(leanDecodeFit(bytes, 1000), 'within the limit');
  const error = t.throws(() => leanDecodeFit(bytes, 100), { instanceOf: IngestError });
  t.is(error?.code, 'too_many_samples');
});

test('a parse past INGEST_TIMEOUT_MS fails the source with ingest_timeout, and the pool goes on', async (t) => {
  const quiet = await startTestService(); // no workers: the upload's job waits, run here by hand
  t.teardown(() => quiet.close());
  const user = await createTestUser(quiet);
  const token = await tokenFor(quiet, user, ['data:read', 'data:write']);
  const bytes = new Uint8Array(readFileSync(join(fixturesDir(), 'fit', '4078723797.fit')));
  const res = await upload(quiet, token, [{ name: 'ride.fit', bytes }]);
  t.is(res.status, 202);
  const sourceId = res.body.sources[0].id as string;
  const pool = createEnginePool({ threads: 1 });
  const samples = await createSampleStore();
  t.teardown(async () => {
    await pool.close();
    await samples.close();
  });
  const deps = { db: quiet.deps.db, pool, samples, files: quiet.deps.engine.files, log: createLogger('silent'), now: () => new Date() };
  const job = { data: { sourceId }, attemptsMade: 0, stalledCounter: 0 } as unknown as Job<{ sourceId: string }>;
  t.deepEqual(await ingestProcessor({ ...deps, timeoutMs: 1 })(job), { failed: 'ingest_timeout' });
  const source = (await (
    await fetch(`${quiet.url}/api/v1/sources/${sourceId}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { status: string };
  t.is(source.status, 'failed');
  t.regex(JSON.stringify(source), /ingest_timeout/);
  // The stopped thread is replaced: the next file parses.
  const other = await upload(quiet, token, [
    { name: 'other.fit', bytes: new Uint8Array(readFileSync(join(fixturesDir(), 'fit', 'Garmin830_with_Stages.fit'))) },
  ]);
  const next = await ingestProcessor({ ...deps, timeoutMs: 60_000 })({
    ...job,
    data: { sourceId: other.body.sources[0].id },
  } as unknown as Job<{ sourceId: string }>);
  t.true(Array.isArray((next as { activities?: unknown[] }).activities), JSON.stringify(next));
});
