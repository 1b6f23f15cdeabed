import test from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { createDb, type Db } from '../db/database.ts';
import { createUser } from '../db/users.ts';
import { createTrace, findTrace, type TraceFields } from '../db/traces.ts';
import { createTest, deleteTest, findTest, listTests, replaceTest, testsOfTraces, tracesOfTest, type TestFields } from '../db/tests.ts';
import { infrastructure } from './helpers/infra.ts';
import { createTestDatabase } from './helpers/database.ts';

/**
 * db/tests.ts against a real PostgreSQL: tests stored, listed and replaced per user; how a trace
 * belongs to a test (explicit by `test_id`, or by time in its window); a test's traces (`auto`,
 * `linked`); a deleted test unlinking its traces without losing them.
 */

let db: Db;
let drop: () => Promise<void>;
test.before(async () => {
  const database = await createTestDatabase((await infrastructure()).postgresUrl);
  db = createDb(database.url, 2);
  drop = database.drop;
});
test.after.always(async () => {
  await db?.destroy();
  await drop?.();
});

const now = new Date('2026-12-01T12:00:00Z');
const at = (iso: string) => new Date(iso);

async function user() {
  const u = await createUser(db, {
    email: `t-${randomBytes(4).toString('hex')}@example.com`,
    first_name: 'A',
    last_name: 'B',
    password_hash: 'x',
  });
  return u.id;
}

function fields(over: Partial<TestFields> = {}): TestFields {
  return {
    sport: 'cycling',
    start_time: at('2026-05-01T09:00:00Z'),
    utc_offset_seconds: 7200,
    end_time: at('2026-05-01T10:00:00Z'),
    end_utc_offset_seconds: 7200,
    title: 'Lactate step test',
    tags: [],
    results: null,
    ...over,
  };
}

function trace(time: string, testId: string | null = null): TraceFields {
  return {
    time: at(time),
    utc_offset_seconds: 0,
    test_id: testId,
    lactate: 1.2,
    rpe: null,
    notes: null,
    power: 200,
    speed: null,
    heart_rate: 140,
    vo2: null,
    tags: [],
    sport: 'cycling',
  };
}

test('tests are stored per user with their results, listed newest first and filtered like activities', async (t) => {
  const [me, other] = [await user(), await user()];
  const lt = await createTest(
    db,
    me,
    fields({ results: { lt1: { power: 210 }, lt2: { power: 285 } }, tags: ['lab', 'spring'] }),
    null,
    now,
  );
  const ramp = await createTest(
    db,
    me,
    fields({ sport: 'running', start_time: at('2026-06-01T08:00:00Z'), end_time: at('2026-06-01T08:30:00Z'), tags: ['lab'] }),
    'app-1',
    now,
  );
  await createTest(db, other, fields(), null, now);

  t.deepEqual((await findTest(db, me, lt.id))?.results, { lt1: { power: 210 }, lt2: { power: 285 } });
  t.is(ramp.created_by, 'app-1');
  t.is(await findTest(db, other, lt.id), undefined, "another user's test is not found");
  t.is(await findTest(db, me, 'not-a-uuid'), undefined);
  t.is(await findTest(db, me, randomUUID()), undefined);

  const ids = async (f: Parameters<typeof listTests>[2]) => (await listTests(db, me, f, { limit: 50, offset: 0 })).map((r) => r.id);
  t.deepEqual(await ids({}), [ramp.id, lt.id], 'newest first, only mine');
  t.deepEqual(await ids({ sports: ['cycling'] }), [lt.id]);
  t.deepEqual(await ids({ tags: ['lab', 'spring'] }), [lt.id], 'every tag required');
  t.deepEqual(await ids({ tags: ['lab'] }), [ramp.id, lt.id]);
  t.deepEqual(await ids({ createdBy: 'app-1' }), [ramp.id]);
  t.deepEqual(await ids({ fromDay: '2026-05-15' }), [ramp.id]);
  t.deepEqual(await listTests(db, me, {}, { limit: 1, offset: 1 }).then((r) => r.map((x) => x.id)), [lt.id]);

  await t.throwsAsync(createTest(db, me, fields({ end_time: at('2026-05-01T08:00:00Z') }), null, now), {
    message: /tests_end_after_start/,
  });
  t.is((await listTests(db, me, {}, { limit: 50, offset: 0 })).length, 2, 'nothing stored by the refused write');
});

test('a replace sets every field but the creator; another user cannot replace it', async (t) => {
  const me = await user();
  const made = await createTest(db, me, fields({ results: { vo2max: 61 }, tags: ['a'] }), 'app-1', now);
  const later = new Date(now.getTime() + 60_000);
  const replaced = await replaceTest(db, me, made.id, fields({ title: null, tags: [], results: null, sport: 'running' }), later);
  t.like(replaced, { id: made.id, title: null, results: null, sport: 'running', created_by: 'app-1' });
  t.deepEqual(replaced?.tags, []);
  t.deepEqual(replaced?.updated_at, later);
  t.is(await replaceTest(db, await user(), made.id, fields(), later), undefined);
  t.is(await replaceTest(db, me, 'nope', fields(), later), undefined);
});

test('a trace belongs to the test its test_id names (explicit) or, naming none, to the newest test whose window holds it', async (t) => {
  const [me, other] = [await user(), await user()];
  const early = await createTest(
    db,
    me,
    fields({ start_time: at('2026-05-01T09:00:00Z'), end_time: at('2026-05-01T11:00:00Z') }),
    null,
    now,
  );
  const late = await createTest(
    db,
    me,
    fields({ start_time: at('2026-05-01T10:00:00Z'), end_time: at('2026-05-01T12:00:00Z') }),
    null,
    now,
  );
  const theirs = await createTest(db, other, fields(), null, now);
  const traces = [
    await createTrace(db, me, trace('2026-05-01T09:30:00Z'), now), // early's window only
    await createTrace(db, me, trace('2026-05-01T10:30:00Z'), now), // both windows: late started last
    await createTrace(db, me, trace('2026-04-01T00:00:00Z', early.id), now), // explicit, outside every window
    await createTrace(db, me, trace('2026-05-01T10:30:00Z', early.id), now), // explicit wins over a window
    await createTrace(db, me, trace('2026-05-01T09:30:00Z', 'lab-2026-05'), now), // a value naming no test
    await createTrace(db, me, trace('2026-05-01T09:30:00Z', theirs.id), now), // another user's test
    await createTrace(db, me, trace('2026-05-02T00:00:00Z'), now), // no window
  ];
  const found = await testsOfTraces(db, me, traces);
  const of = (i: number) => {
    const f = found.get(traces[i]!.id);
    return f && [f.test.id, f.match];
  };
  t.deepEqual(of(0), [early.id, 'window']);
  t.deepEqual(of(1), [late.id, 'window']);
  t.deepEqual(of(2), [early.id, 'explicit']);
  t.deepEqual(of(3), [early.id, 'explicit']);
  t.is(of(4), undefined);
  t.is(of(5), undefined);
  t.is(of(6), undefined);
  t.deepEqual(await testsOfTraces(db, me, []), new Map());
});

test("a test's traces: linked ones whatever their time; auto adds those in its window that no other test claims", async (t) => {
  const me = await user();
  const mine = await createTest(db, me, fields(), null, now);
  const another = await createTest(
    db,
    me,
    fields({ start_time: at('2026-07-01T09:00:00Z'), end_time: at('2026-07-01T10:00:00Z') }),
    null,
    now,
  );
  const inWindow = await createTrace(db, me, trace('2026-05-01T09:10:00Z'), now);
  const linkedOutside = await createTrace(db, me, trace('2026-04-30T09:00:00Z', mine.id), now);
  const claimedByAnother = await createTrace(db, me, trace('2026-05-01T09:20:00Z', another.id), now);
  const legacy = await createTrace(db, me, trace('2026-05-01T09:30:00Z', 'old-label'), now);
  await createTrace(db, me, trace('2026-05-01T10:30:00Z'), now); // after the window
  await createTrace(db, await user(), trace('2026-05-01T09:15:00Z'), now); // another user's

  const ids = async (which: 'auto' | 'linked') => (await tracesOfTest(db, me, mine, which)).map((r) => r.id);
  t.deepEqual(await ids('linked'), [linkedOutside.id]);
  t.deepEqual(await ids('auto'), [linkedOutside.id, inWindow.id, legacy.id], 'oldest first; the trace linked to another test is left out');
  t.false((await ids('auto')).includes(claimedByAnother.id));
});

test('deleting a test unlinks its traces, which keep their measurements; a second delete finds nothing', async (t) => {
  const me = await user();
  const made = await createTest(db, me, fields(), null, now);
  const linked = await createTrace(db, me, trace('2026-03-01T09:00:00Z', made.id), now);
  t.false(await deleteTest(db, await user(), made.id, now), "another user's delete finds nothing");
  t.true(await deleteTest(db, me, made.id, now));
  const kept = await findTrace(db, me, linked.id);
  t.like(kept, { test_id: null, lactate: 1.2, power: 200 });
  t.is(await findTest(db, me, made.id), undefined);
  t.false(await deleteTest(db, me, made.id, now));
  t.false(await deleteTest(db, me, 'not-a-uuid', now));
});
