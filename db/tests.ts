import { sql, type UpdateObject } from 'kysely';
import type { Database, Db, TestRow, TraceRow } from './database.ts';
import { userDataFilter, type ActivityFilter } from './filters.ts';
import { bumpReadVersion } from './read-version.ts';
import { testLoadChanged } from './training-load.ts';
import { recordEvents } from './events.ts';
import { isUuid } from '../lib/ids.ts';
import { ACTIVITY_SUMMARY_COLUMNS, type ActivitySummaryRow } from './activities.ts';

/**
 * The user's tests (lab and field tests: a lactate step test, a ramp, critical-power efforts) and how
 * traces belong to them. A trace belongs to a test in one of two ways:
 * - `explicit`: its `test_id` names one of the user's tests, whatever the trace's time;
 * - `window`: it names none (`test_id` null) and its instant lies in a test's [start, end]; when two
 *   tests' windows hold it, the one that started last.
 * A `test_id` that names a test is its id as stored (lower-case UUID, as the API writes it). A trace whose `test_id` names no stored test (a value written before tests were stored, kept as it
 * was) belongs to no test. Deleting a test unlinks its traces (their `test_id` becomes null); their
 * measurements stay. Each change writes its event (`test_created`, `test_updated`, `test_deleted`, and
 * `trace_updated` for each trace a deletion unlinks) in its transaction, for the applications' webhooks.
 */

/** What a client writes: every field (a replace sets the omitted ones to null; `end` is then start + 3 h, said by the API). */
export interface TestFields {
  sport: string;
  start_time: Date;
  utc_offset_seconds: number;
  end_time: Date;
  end_utc_offset_seconds: number;
  title: string | null;
  tags: string[];
  results: Record<string, unknown> | null;
}

export type TestMatch = 'explicit' | 'window';

const stored = (f: TestFields) => ({ ...f, results: f.results === null ? null : JSON.stringify(f.results) });

/** A new test of the user's; `createdBy` is the creating application's client id (null: first-party). */
export function createTest(db: Db, userId: string, fields: TestFields, createdBy: string | null, now: Date): Promise<TestRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('tests')
      .values({ ...stored(fields), user_id: userId, created_by: createdBy, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await testLoadChanged(trx, userId, null, row);
    await bumpReadVersion(trx, userId);
    await recordEvents(trx, [{ user_id: userId, type: 'test_created', resource_id: row.id }], now);
    return row;
  });
}

/** Replace every field of one of the user's tests (not who created it); undefined when there is none. */
export function replaceTest(db: Db, userId: string, id: string, fields: TestFields, now: Date): Promise<TestRow | undefined> {
  return updateTest(db, userId, id, stored(fields), now);
}

/** One update of the user's test, as a `test_updated` change (the read version bumped, the event written). */
async function updateTest(
  db: Db,
  userId: string,
  id: string,
  set: UpdateObject<Database, 'tests'>,
  now: Date,
): Promise<TestRow | undefined> {
  if (!isUuid(id)) return undefined;
  return db.transaction().execute(async (trx) => {
    const before = await trx
      .selectFrom('tests')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (!before) return undefined;
    const row = await trx
      .updateTable('tests')
      .set({ ...set, updated_at: now })
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    if (!row) return undefined;
    await testLoadChanged(trx, userId, before, row);
    await bumpReadVersion(trx, userId);
    await recordEvents(trx, [{ user_id: userId, type: 'test_updated', resource_id: id }], now);
    return row;
  });
}

/** Delete one of the user's tests and unlink the traces that named it, in one transaction; false when there is none. */
export async function deleteTest(db: Db, userId: string, id: string, now: Date): Promise<boolean> {
  if (!isUuid(id)) return false;
  return db.transaction().execute(async (trx) => {
    const gone = await trx.deleteFrom('tests').where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
    if (!gone) return false;
    await testLoadChanged(trx, userId, gone, null);
    const unlinked = await trx
      .updateTable('traces')
      .set({ test_id: null, updated_at: now })
      .where('user_id', '=', userId)
      .where('test_id', '=', id)
      .returning('id')
      .execute();
    await bumpReadVersion(trx, userId);
    await recordEvents(
      trx,
      [
        { user_id: userId, type: 'test_deleted', resource_id: id },
        ...unlinked.map((t) => ({ user_id: userId, type: 'trace_updated' as const, resource_id: t.id })),
      ],
      now,
    );
    return true;
  });
}

/** One of the user's tests; undefined when there is none (an id that is not a UUID names none). */
export async function findTest(db: Db, userId: string, id: string): Promise<TestRow | undefined> {
  if (!isUuid(id)) return undefined;
  return db.selectFrom('tests').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** A page of the user's tests, newest first: the activity list's filter on the test's start (but every tag required), and its creator. */
export function listTests(
  db: Db,
  userId: string,
  f: ActivityFilter & { createdBy?: string },
  page: { limit: number; offset: number },
): Promise<TestRow[]> {
  const { tags, createdBy, ...rest } = f;
  let q = db
    .selectFrom('tests')
    .selectAll()
    .where(userDataFilter(userId, rest, 'start_time'));
  // Unlike the activity list (any of the tags), a test must carry every tag asked for.
  if (tags?.length) q = q.where(sql<boolean>`tags @> ${tags}::text[]`);
  if (createdBy !== undefined) q = q.where('created_by', '=', createdBy);
  return q.orderBy('start_time', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
}

/** For each trace, the test it belongs to and how (see the header); traces that belong to none are absent. */
export async function testsOfTraces(
  db: Db,
  userId: string,
  traces: Pick<TraceRow, 'id' | 'time' | 'test_id'>[],
): Promise<Map<string, { test: TestRow; match: TestMatch }>> {
  const found = new Map<string, { test: TestRow; match: TestMatch }>();
  if (!traces.length) return found;
  const named = [...new Set(traces.flatMap((t) => (t.test_id !== null && isUuid(t.test_id) ? [t.test_id] : [])))];
  const byId = new Map<string, TestRow>();
  if (named.length) {
    const rows = await db.selectFrom('tests').selectAll().where('user_id', '=', userId).where('id', 'in', named).execute();
    for (const row of rows) byId.set(row.id, row);
  }
  for (const t of traces) {
    const test = t.test_id === null ? undefined : byId.get(t.test_id);
    if (test) found.set(t.id, { test, match: 'explicit' });
  }
  const unnamed = traces.filter((t) => t.test_id === null);
  if (!unnamed.length) return found;
  const times = unnamed.map((t) => new Date(t.time).toISOString());
  const windows = await sql<{ trace_index: number } & TestRow>`
    SELECT x.i - 1 AS trace_index, t.*
    FROM unnest(${times}::timestamptz[]) WITH ORDINALITY AS x(at, i)
    CROSS JOIN LATERAL (
      SELECT * FROM tests
      WHERE user_id = ${userId} AND start_time <= x.at AND end_time >= x.at
      ORDER BY start_time DESC, id DESC LIMIT 1
    ) t`.execute(db);
  for (const { trace_index, ...test } of windows.rows)
    found.set(unnamed[Number(trace_index)]!.id, { test: test as TestRow, match: 'window' });
  return found;
}

/**
 * A test's traces, oldest first. `linked`: those whose `test_id` names it, whatever their time.
 * `auto`: those, and the traces inside its window that name no stored test of the user's (so a trace
 * linked to another test is left out).
 */
export function tracesOfTest(
  db: Db,
  userId: string,
  test: Pick<TestRow, 'id' | 'start_time' | 'end_time'>,
  which: 'auto' | 'linked',
  limit?: number,
) {
  const linked = sql<boolean>`traces.test_id = ${test.id}`;
  const inWindow = sql<boolean>`traces.time >= ${test.start_time} AND traces.time <= ${test.end_time} AND (traces.test_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM tests o WHERE o.user_id = ${userId} AND o.id::text = traces.test_id))`;
  return db
    .selectFrom('traces')
    .selectAll()
    .where('user_id', '=', userId)
    .where(which === 'linked' ? linked : sql<boolean>`(${linked} OR (${inWindow}))`)
    .orderBy('time')
    .orderBy('id')
    .$if(limit !== undefined, (q) => q.limit(limit!))
    .execute();
}

/** How many traces name the test in their `test_id`. */
export async function linkedTraceCount(db: Db, userId: string, testId: string): Promise<number> {
  const row = await db
    .selectFrom('traces')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('test_id', '=', testId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The activities overlapping the test's window with what its analysis reads (metrics, laps), oldest first, at most `limit`. */
export function activitiesForAnalysis(db: Db, userId: string, test: Pick<TestRow, 'start_time' | 'end_time'>, limit: number) {
  return activitiesInWindow(db, userId, test)
    .select(['id', 'user_id', 'start_time', 'end_time', 'metrics', 'laps', 'updated_at'])
    .limit(limit)
    .execute();
}

/** Sets the given members of the test's results (the others kept), as a `test_updated` change. */
export function mergeTestResults(
  db: Db,
  userId: string,
  id: string,
  patch: Record<string, unknown>,
  now: Date,
): Promise<TestRow | undefined> {
  return updateTest(db, userId, id, { results: sql`coalesce(results, '{}'::jsonb) || ${JSON.stringify(patch)}::jsonb` }, now);
}

/** The user's activities whose span overlaps the test's window, oldest first (as lists show them). */
export function activitiesOverlapping(
  db: Db,
  userId: string,
  test: Pick<TestRow, 'start_time' | 'end_time'>,
): Promise<ActivitySummaryRow[]> {
  return activitiesInWindow(db, userId, test).select(ACTIVITY_SUMMARY_COLUMNS).execute();
}

/** The user's activities whose span overlaps the test's window, oldest first: the query the two readers above select from. */
function activitiesInWindow(db: Db, userId: string, test: Pick<TestRow, 'start_time' | 'end_time'>) {
  return db
    .selectFrom('activities')
    .where('user_id', '=', userId)
    .where('start_time', '<=', test.end_time)
    .where('end_time', '>=', test.start_time)
    .orderBy('start_time')
    .orderBy('id');
}

/**
 * The user's newest test (by start, then id) whose local start day (on the offset it was written
 * with, as activities' days are read) is on or before `toDay`, of one of `sports` when given (sub-sports
 * included), whose results hold a number for `member` (`critical_power`, `critical_speed`): the lab
 * value the intensity-duration model is compared with. Undefined when there is none.
 */
export function newestTestWith(
  db: Db,
  userId: string,
  member: 'critical_power' | 'critical_speed',
  f: { toDay: string; sports?: string[] },
): Promise<TestRow | undefined> {
  return db
    .selectFrom('tests')
    .selectAll()
    .where(userDataFilter(userId, f, 'start_time'))
    .where(sql<boolean>`jsonb_typeof(results -> ${member}) = 'number'`)
    .orderBy('start_time', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** A trace of a new test (createTestWithTraces): its `test_id` is the new test's. */
export type StepTraceFields = Omit<TraceRow, 'id' | 'user_id' | 'created_at' | 'updated_at' | 'test_id'>;

/**
 * A new test and its traces (a pasted step table's steps), in one transaction: every trace names the
 * new test by `test_id`, and either all of it is stored or none. Writes `test_created` and a
 * `trace_created` per trace, as creating each through the API would.
 */
export function createTestWithTraces(
  db: Db,
  userId: string,
  fields: TestFields,
  traces: StepTraceFields[],
  createdBy: string | null,
  now: Date,
): Promise<{ test: TestRow; traces: TraceRow[] }> {
  return db.transaction().execute(async (trx) => {
    const test = await trx
      .insertInto('tests')
      .values({ ...stored(fields), user_id: userId, created_by: createdBy, created_at: now, updated_at: now })
      .returningAll()
      .executeTakeFirstOrThrow();
    const rows = traces.length
      ? await trx
          .insertInto('traces')
          .values(traces.map((t) => ({ ...t, test_id: test.id, user_id: userId, created_at: now, updated_at: now })))
          .returningAll()
          .execute()
      : [];
    await testLoadChanged(trx, userId, null, test);
    await bumpReadVersion(trx, userId);
    await recordEvents(
      trx,
      [
        { user_id: userId, type: 'test_created', resource_id: test.id },
        ...rows.map((t) => ({ user_id: userId, type: 'trace_created' as const, resource_id: t.id })),
      ],
      now,
    );
    return { test, traces: rows.sort((a, b) => a.time.getTime() - b.time.getTime()) };
  });
}

/** The user's tests whose window overlaps the span (an activity's), oldest first. */
export function testsOverlapping(db: Db, userId: string, span: { start_time: Date; end_time: Date }): Promise<TestRow[]> {
  return db
    .selectFrom('tests')
    .selectAll()
    .where('user_id', '=', userId)
    .where('start_time', '<=', span.end_time)
    .where('end_time', '>=', span.start_time)
    .orderBy('start_time')
    .orderBy('id')
    .execute();
}
