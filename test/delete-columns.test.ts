/**
 * A deleted activity's samples leave the user's channel-column files (engine/samples/channel-columns.ts)
 * within a bounded time, read from the files themselves: at the delete request (its power and its
 * fatigue-grid entry, in every generation on disk), and, should that removal not have happened (a
 * failure, a process that died between the commit and it), at the next housekeeping run.
 */
import test from 'ava';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Job } from 'bullmq';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { api, uploadAndWait } from './helpers/activities.ts';
import { afterGridEntry } from '../engine/curves/after-grid.ts';
import { deleteActivity } from '../db/activities.ts';
import { housekeepingProcessor } from '../workers/housekeeping.ts';
import type { HousekeepingJob } from '../workers/queues.ts';
import { columnsDir } from '../lib/storage.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true, env: { CURVE_CACHE_SECONDS: '0' } });
});
test.after.always(() => service?.close());

/** A 10-minute ride of whole watts (float32 entries in the column), distinct per seed. */
function power(seed: number): number[] {
  return Array.from({ length: 600 }, (_, i) => 100 + ((i * seed + seed * 7) % 311));
}
function csv(day: number, seed: number): Uint8Array {
  const start = Date.UTC(2024, 4, day, 8);
  return new TextEncoder().encode(
    `timestamp,power\n${power(seed)
      .map((w, i) => `${new Date(start + i * 1000).toISOString()},${w}`)
      .join('\n')}\n`,
  );
}

/** The column files (every generation's values) that hold these bytes. */
async function filesHolding(userId: string, bytes: Buffer): Promise<string[]> {
  const dir = columnsDir(service.config.DATA_DIR, userId);
  const names = (await readdir(dir)).filter((n) => n.endsWith('.values')).sort();
  const found: string[] = [];
  for (const name of names) if ((await readFile(path.join(dir, name))).includes(bytes)) found.push(name);
  return found;
}
const powerBytes = (seed: number) => Buffer.from(Float32Array.from(power(seed)).buffer);
const gridBytes = (seed: number) => Buffer.from(afterGridEntry(Float64Array.from(power(seed))).buffer);

async function ridesWithColumns() {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const sources = await uploadAndWait(
    service,
    token,
    [1, 2].map((d) => ({ name: `ride${d}.csv`, bytes: csv(d, 10 + d) })),
    { sport: 'cycling' },
  );
  const ids = sources.map((s) => s.activity_ids[0] as string);
  // A fatigue request off the grid and one on it: the power column and the grid, filled or appended.
  for (const after of ['0,100', '0,250'])
    mustAnswer(
      await api(
        service,
        token,
        'GET',
        `/api/v1/activities/longitudinal-mean-max?metric=power&after=${after}&start=2024-01-01&end=2024-12-31&format=json`,
      ),
    );
  return { user, token, ids };
}
function mustAnswer(res: { status: number; body: unknown }) {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

test("DELETE removes the activity's samples and grid entry from the column files before it answers", async (t) => {
  const { user, token, ids } = await ridesWithColumns();
  t.deepEqual(await filesHolding(user.id, powerBytes(11)), ['power.1.values']);
  t.deepEqual(await filesHolding(user.id, gridBytes(11)), ['power-after-v1.1.values']);
  t.is((await api(service, token, 'DELETE', `/api/v1/activities/${ids[0]}`)).status, 204);
  t.deepEqual(await filesHolding(user.id, powerBytes(11)), [], 'its power is gone from every values file');
  t.deepEqual(await filesHolding(user.id, gridBytes(11)), [], 'and its grid entry');
  t.deepEqual(await filesHolding(user.id, powerBytes(12)), ['power.1.values'], 'the other ride stays');
});

test('a deletion whose column removal did not happen is swept by the next housekeeping run', async (t) => {
  const { user, ids } = await ridesWithColumns();
  // The row deleted as the delete request does, without the removal that follows it (a process that died in between).
  t.truthy(await deleteActivity(service.deps.db, user.id, ids[1]!, service.deps.now()));
  t.deepEqual(await filesHolding(user.id, powerBytes(12)), ['power.1.values'], 'still on disk');
  const run = housekeepingProcessor({
    db: service.deps.db,
    queues: service.deps.queues,
    dataDir: service.config.DATA_DIR,
    store: service.deps.engine.files.store,
    log: service.deps.log,
    now: service.deps.now,
    columns: service.deps.engine.columns,
  });
  const result = await run({ data: { task: 'purge-expired' } } as Job<HousekeepingJob>);
  t.true(result.columnSweeps >= 1);
  t.deepEqual(await filesHolding(user.id, powerBytes(12)), []);
  t.deepEqual(await filesHolding(user.id, gridBytes(12)), []);
  t.deepEqual(await filesHolding(user.id, powerBytes(11)), ['power.1.values'], 'the other ride stays');
  const again = await run({ data: { task: 'purge-expired' } } as Job<HousekeepingJob>);
  t.true(again.columnSweeps >= 1, 'a second run sweeps again, harmlessly');
  t.deepEqual(await filesHolding(user.id, powerBytes(11)), ['power.1.values']);
});
