import test from 'ava';
import { runCli } from './helpers/cli.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestService, type TestService } from './helpers/service.ts';
import { createTestUser, tokenFor } from './helpers/users.ts';
import { uploadAndWait } from './helpers/activities.ts';
import { fixturesDir } from './helpers/fixtures.ts';

let service: TestService;
test.before(async () => {
  service = await startTestService({ workers: true });
});
test.after.always(() => service?.close());

const cli = (...args: string[]) =>
  runCli(
    {
      DATABASE_URL: service.config.DATABASE_URL,
      REDIS_URL: service.config.REDIS_URL,
      QUEUE_PREFIX: service.config.QUEUE_PREFIX,
      DATA_DIR: service.config.DATA_DIR,
    },
    ...args,
  );

test('`cli curves --wait` recomputes the missing curves of a user from the sample files, byte for byte', async (t) => {
  const user = await createTestUser(service);
  const token = await tokenFor(service, user, ['data:read', 'data:write']);
  const [source] = await uploadAndWait(service, token, [
    { name: 'ride.fit', bytes: readFileSync(join(fixturesDir(), 'fit', '4078723797.fit')) },
  ]);
  const id = source.activity_ids[0] as string;
  const { db } = service.deps;
  const before = await db.selectFrom('activity_curves').selectAll().where('activity_id', '=', id).orderBy('metric').execute();
  t.deepEqual(
    before.map((r) => r.metric),
    ['heart_rate', 'power', 'speed'],
  );
  await db.deleteFrom('activity_curves').where('activity_id', '=', id).execute();
  const versionBefore = (await db.selectFrom('users').select('data_version').where('id', '=', user.id).executeTakeFirstOrThrow())
    .data_version;

  const run = await cli('curves', '--user', user.email, '--wait', '--json');
  t.is(run.code, 0, run.stderr);
  t.like(JSON.parse(run.stdout), { recomputed: 1, missing_samples: 0 });
  const after = await db.selectFrom('activity_curves').selectAll().where('activity_id', '=', id).orderBy('metric').execute();
  t.deepEqual(
    after.map((r) => [r.metric, r.encoding, r.level_duration, r.level_start, r.awd]),
    before.map((r) => [r.metric, r.encoding, r.level_duration, r.level_start, r.awd]),
  );
  const versionAfter = (await db.selectFrom('users').select('data_version').where('id', '=', user.id).executeTakeFirstOrThrow())
    .data_version;
  t.true(BigInt(versionAfter) > BigInt(versionBefore), 'cached curve results of the user are invalidated');

  const again = await cli('curves', '--user', user.email, '--wait', '--json');
  t.like(JSON.parse(again.stdout), { recomputed: 0 }, 'nothing is missing any more');
});

test('`cli curves` names an unknown user', async (t) => {
  const run = await cli('curves', '--user', 'nobody@example.com');
  t.is(run.code, 2);
  t.regex(run.stderr, /no user with email nobody@example.com/);
});
