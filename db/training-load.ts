import { sql, type Transaction } from 'kysely';
import type { Database, Db } from './database.ts';
import { bumpDataAndReadVersion } from './read-version.ts';
import { sportMatches } from '../lib/sports.ts';
import { sportsClause } from './filters.ts';
import { formatLocal } from '../lib/time.ts';
import type { ZoneDefinition, ZoneMetric } from '../engine/load/zones.ts';
import { orderEntries, THRESHOLD_FIELDS, type ThresholdEntry, type ThresholdField } from '../engine/load/thresholds.ts';
import type { ActivityLoad } from '../engine/load/activity-load.ts';

/**
 * Training load's storage: the thresholds an athlete declares, the zone boundaries they edit, and per
 * activity what those make of it (`activity_load`). Every input of a load row (thresholds, lab tests'
 * results, resting heart rate measures, zones) has a version per user (`training_settings.version`):
 * a change bumps it and deletes the load rows it can alter, in one transaction; a load row is stored
 * only under the version it was computed with (`insertActivityLoads`), so a computation that raced a
 * change is dropped, and the job queued for the new version recomputes what is missing.
 */

export type Trx = Db | Transaction<Database>;

/** The athlete's edited zones: per sport root, per metric, the zones' names and lower bounds (% of the threshold). */
export type ZoneSettings = Record<string, Partial<Record<ZoneMetric, ZoneDefinition[]>>>;

export interface DeclaredThreshold extends Partial<Record<ThresholdField, number | null>> {
  sport: string;
  valid_from: string;
}

export interface TrainingContext {
  version: number;
  /** Declared and test entries, in resolution order (engine/load/thresholds.ts). */
  entries: ThresholdEntry[];
  /** The daily `resting_hr` measures, ascending by day. */
  restingHr: [string, number][];
  zones: ZoneSettings;
}

/** The user's settings row, created at version 0 on first use (a read writes nothing once it exists). */
async function settingsRow(db: Trx, userId: string) {
  const read = () => db.selectFrom('training_settings').select(['version', 'zones']).where('user_id', '=', userId).executeTakeFirst();
  const row = await read();
  if (row) return row;
  await db
    .insertInto('training_settings')
    .values({ user_id: userId })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  return (await read())!;
}

/** The athlete's declared thresholds, by sport then day. */
export async function declaredThresholds(db: Trx, userId: string): Promise<DeclaredThreshold[]> {
  const rows = await db
    .selectFrom('thresholds')
    .select(['sport', 'valid_from', ...THRESHOLD_FIELDS])
    .where('user_id', '=', userId)
    .orderBy('sport')
    .orderBy('valid_from')
    .execute();
  return rows.map((r) => ({ ...r, valid_from: String(r.valid_from) }));
}

/** The heart rate a lab test's results give as the threshold: its second threshold's, by the first marker that has one. */
const THRESHOLD_MARKERS = ['lt2', 'mlss', 'second_threshold', 'vt2'] as const;

/** A lab test's results as a threshold entry (from the local day of its start); null when they hold none. */
export function testEntry(test: {
  id: string;
  sport: string;
  start_time: Date;
  utc_offset_seconds: number;
  results: Record<string, unknown> | null;
}): ThresholdEntry | null {
  const r = (test.results ?? {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && v > 0 ? v : null);
  const markerHr = THRESHOLD_MARKERS.map((m) => num((r[m] as { heart_rate?: unknown } | null | undefined)?.heart_rate)).find(
    (v) => v !== null,
  );
  const entry: ThresholdEntry = {
    sport: test.sport,
    valid_from: formatLocal(test.start_time, test.utc_offset_seconds).slice(0, 10),
    origin: 'test',
    test_id: test.id,
    critical_power: num(r.critical_power),
    w_prime: num(r.w_prime),
    critical_speed: num(r.critical_speed),
    threshold_heart_rate: markerHr ?? null,
    max_heart_rate: num(r.heart_rate_max),
  };
  return THRESHOLD_FIELDS.some((f) => entry[f] !== null && entry[f] !== undefined) ? entry : null;
}

/** The user's lab tests holding thresholds, as entries. */
export async function testEntries(db: Trx, userId: string): Promise<ThresholdEntry[]> {
  const tests = await db
    .selectFrom('tests')
    .select(['id', 'sport', 'start_time', 'utc_offset_seconds', 'results'])
    .where('user_id', '=', userId)
    .where('results', 'is not', null)
    .execute();
  return tests.flatMap((t) => testEntry(t) ?? []);
}

/** Everything a load row is computed from, read once for a batch of the user's activities. */
export async function trainingContext(db: Db, userId: string): Promise<TrainingContext> {
  const settings = await settingsRow(db, userId);
  const declared = await declaredThresholds(db, userId);
  const tests = await testEntries(db, userId);
  const resting = await db
    .selectFrom('dailies')
    .select(['day', 'value'])
    .where('user_id', '=', userId)
    .where('measure', '=', 'resting_hr')
    .orderBy('day')
    .execute();
  return {
    version: settings.version,
    entries: orderEntries([...declared.map((d) => ({ ...d, origin: 'declared' as const })), ...tests]),
    restingHr: resting.map((r) => [String(r.day), r.value]),
    zones: (settings.zones ?? {}) as ZoneSettings,
  };
}

/**
 * An input of the user's load changed for `sport` (null: every sport) from `fromDay` (null: every
 * day): the version is bumped and the load rows it can alter deleted, in the caller's transaction.
 * Returns the new version.
 */
export async function loadInputsChanged(
  trx: Trx,
  userId: string,
  sport: string | null,
  fromDay: string | null,
): Promise<{ version: number; deleted: number }> {
  const version = await bumpVersion(trx, userId);
  let stale = trx.selectFrom('activity_load').select(['activity_id', 'sport']).where('user_id', '=', userId);
  if (fromDay) stale = stale.where('day', '>=', fromDay);
  const rows = await stale.execute();
  const ids = rows.filter((r) => sport === null || sportMatches(r.sport, sport)).map((r) => r.activity_id);
  await deleteLoadRows(trx, userId, ids);
  return { version, deleted: ids.length };
}

/** Delete load rows (in statements of at most 5,000 ids); the answers that showed them move on. */
async function deleteLoadRows(trx: Trx, userId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  for (let i = 0; i < ids.length; i += 5000)
    await trx
      .deleteFrom('activity_load')
      .where('activity_id', 'in', ids.slice(i, i + 5000))
      .execute();
  await bumpDataAndReadVersion(trx, userId);
}

/**
 * The user's load rows whose critical power was modelled (the model fitted to what was stored then)
 * deleted, with a new version, so that they are fitted again on the whole history; undefined when
 * there is none.
 */
export function modelledLoadStale(db: Db, userId: string): Promise<number | undefined> {
  return db.transaction().execute(async (trx) => {
    const modelled = await trx
      .selectFrom('activity_load')
      .select('activity_id')
      .where('user_id', '=', userId)
      .where(sql<boolean>`thresholds->'critical_power'->>'origin' = 'modelled'`)
      .execute();
    if (!modelled.length) return undefined;
    const version = await bumpVersion(trx, userId);
    await deleteLoadRows(
      trx,
      userId,
      modelled.map((r) => r.activity_id),
    );
    return version;
  });
}

type TestLike = Parameters<typeof testEntry>[0];

/** A lab test was created, changed or deleted: when the thresholds its results give changed, the load from its day on is recomputed. */
export async function testLoadChanged(trx: Trx, userId: string, before: TestLike | null, after: TestLike | null): Promise<void> {
  const was = before && testEntry(before);
  const is = after && testEntry(after);
  if (JSON.stringify(was) === JSON.stringify(is)) return;
  for (const e of [was, is]) if (e) await loadInputsChanged(trx, userId, e.sport, e.valid_from);
}

async function bumpVersion(trx: Trx, userId: string): Promise<number> {
  await settingsRow(trx, userId);
  const { version } = await trx
    .updateTable('training_settings')
    .set({ version: sql`version + 1`, updated_at: sql`now()` })
    .where('user_id', '=', userId)
    .returning('version')
    .executeTakeFirstOrThrow();
  return version;
}

const valuesOf = (t: DeclaredThreshold) => THRESHOLD_FIELDS.map((f) => t[f] ?? null).join(',');

/** Per sport, the first day whose thresholds differ between two histories. */
export function firstChanges(before: DeclaredThreshold[], after: DeclaredThreshold[]): Map<string, string> {
  const key = (t: DeclaredThreshold) => `${t.sport}\u0000${t.valid_from}`;
  const old = new Map(before.map((t) => [key(t), valuesOf(t)]));
  const now = new Map(after.map((t) => [key(t), valuesOf(t)]));
  const changes = new Map<string, string>();
  const note = (t: DeclaredThreshold) => {
    const day = changes.get(t.sport);
    if (day === undefined || t.valid_from < day) changes.set(t.sport, t.valid_from);
  };
  for (const t of after) if (old.get(key(t)) !== valuesOf(t)) note(t);
  for (const t of before) if (!now.has(key(t))) note(t);
  return changes;
}

/**
 * Replace the declared history. Only the load rows of the sports whose history changed, from the
 * first changed day on, are deleted. Returns the new version (unchanged when nothing changed) and the
 * number of activities to recompute.
 */
export function replaceThresholds(db: Db, userId: string, entries: DeclaredThreshold[]): Promise<{ version: number; stale: number }> {
  return db.transaction().execute(async (trx) => {
    const settings = await lockedSettings(trx, userId);
    const changes = firstChanges(await declaredThresholds(trx, userId), entries);
    if (!changes.size) return { version: settings.version, stale: 0 };
    await trx.deleteFrom('thresholds').where('user_id', '=', userId).execute();
    if (entries.length)
      await trx
        .insertInto('thresholds')
        .values(entries.map((e) => ({ ...e, user_id: userId })))
        .execute();
    let version = settings.version;
    let stale = 0;
    for (const [sport, day] of changes) {
      const changed = await loadInputsChanged(trx, userId, sport, day);
      version = changed.version;
      stale += changed.deleted;
    }
    return { version, stale };
  });
}

/** The user's settings row, locked until the transaction ends: one change of thresholds or zones at a time. */
async function lockedSettings(trx: Trx, userId: string) {
  await settingsRow(trx, userId);
  return trx
    .selectFrom('training_settings')
    .select(['version', 'zones'])
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

/** The athlete's edited zones. */
export async function zoneSettings(db: Db, userId: string): Promise<ZoneSettings> {
  return ((await settingsRow(db, userId)).zones ?? {}) as ZoneSettings;
}

/** Replace the edited zones; the load rows of the sports whose zones changed are recomputed. Returns whether any sport's zones changed. */
export function replaceZones(db: Db, userId: string, zones: ZoneSettings): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const before = ((await lockedSettings(trx, userId)).zones ?? {}) as ZoneSettings;
    await trx
      .updateTable('training_settings')
      .set({ zones: JSON.stringify(zones) })
      .where('user_id', '=', userId)
      .execute();
    let changed = false;
    for (const root of new Set([...Object.keys(before), ...Object.keys(zones)])) {
      if (JSON.stringify(before[root] ?? {}) === JSON.stringify(zones[root] ?? {})) continue;
      await loadInputsChanged(trx, userId, root, null);
      changed = true;
    }
    return changed;
  });
}

export interface NewActivityLoad {
  activityId: string;
  userId: string;
  sport: string;
  day: string;
  load: ActivityLoad;
  thresholds: Record<string, unknown>;
}

/** Store load rows of one user computed under `version`: `superseded` (nothing stored) when the user's inputs changed since, `gone` when an activity was deleted. */
export function storeActivityLoads(db: Db, rows: NewActivityLoad[], version: number, now: Date): Promise<'stored' | 'superseded' | 'gone'> {
  return db.transaction().execute(async (trx) => {
    const outcome = await insertActivityLoads(trx, rows, version, now);
    // The activities' details, the lists and the computed answers show them: their versions move on.
    if (outcome === 'stored' && rows.length) await bumpDataAndReadVersion(trx, rows[0]!.userId);
    return outcome;
  });
}

/**
 * Insert (or replace) load rows of one user computed under `version`, in the caller's transaction (an
 * ingest's, which bumps the user's versions itself): nothing when the user's inputs changed since
 * (`superseded`) or an activity is gone. The version is read FOR SHARE, so a change waits for this
 * transaction, and this one for a change.
 */
export async function insertActivityLoads(
  trx: Transaction<Database>,
  rows: NewActivityLoad[],
  version: number,
  now: Date,
): Promise<'stored' | 'superseded' | 'gone'> {
  if (!rows.length) return 'stored';
  const current = await trx
    .selectFrom('training_settings')
    .select('version')
    .where('user_id', '=', rows[0]!.userId)
    .forShare()
    .executeTakeFirst();
  if (current?.version !== version) return 'superseded';
  const ids = rows.map((r) => r.activityId);
  const exists = await trx.selectFrom('activities').select('id').where('id', 'in', ids).forShare().execute();
  if (exists.length !== ids.length) return 'gone';
  for (const row of rows) {
    const { stress, timeInZones, wPrimeBalanceMin } = row.load;
    const values = {
      user_id: row.userId,
      sport: row.sport,
      day: row.day,
      version,
      stress: stress.score,
      method: stress.method,
      intensity_factor: stress.intensity_factor,
      reason: stress.reason,
      time_in_zones: JSON.stringify(timeInZones),
      w_prime_balance_min: wPrimeBalanceMin,
      thresholds: JSON.stringify(row.thresholds),
      computed_at: now,
    };
    await trx
      .insertInto('activity_load')
      .values({ activity_id: row.activityId, ...values })
      .onConflict((oc) => oc.column('activity_id').doUpdateSet(values))
      .execute();
  }
  return 'stored';
}

/** The user's activities without a load row, in pages by id. */
export function activitiesNeedingLoad(db: Db, userId: string, opts: { after?: string; limit: number }) {
  let q = db
    .selectFrom('activities as a')
    .leftJoin('activity_load as l', 'l.activity_id', 'a.id')
    .select([
      'a.id',
      'a.user_id',
      'a.sport',
      'a.start_time',
      'a.utc_offset_seconds',
      'a.summary',
      'a.timer_seconds',
      'a.end_time',
      'a.updated_at',
    ])
    .where('a.user_id', '=', userId)
    .where('l.activity_id', 'is', null);
  if (opts.after) q = q.where('a.id', '>', opts.after);
  return q.orderBy('a.id').limit(opts.limit).execute();
}

/**
 * Users with activities stored before `before` lacking a load row (stored before training load, or
 * whose computation failed): later ones are the ingest's to compute.
 */
export async function usersNeedingLoad(db: Db, before: Date, limit = 1000): Promise<string[]> {
  const rows = await db
    .selectFrom('activities as a')
    .leftJoin('activity_load as l', 'l.activity_id', 'a.id')
    .select('a.user_id')
    .distinct()
    .where('l.activity_id', 'is', null)
    .where('a.created_at', '<', before)
    .limit(limit)
    .execute();
  return rows.map((r) => r.user_id);
}

/** The user's current version. */
export async function loadVersion(db: Db, userId: string): Promise<number> {
  return (await settingsRow(db, userId)).version;
}

/** One activity's load row. */
export function activityLoadRow(db: Db, activityId: string) {
  return db.selectFrom('activity_load').selectAll().where('activity_id', '=', activityId).executeTakeFirst();
}

/** The load rows of some activities, by id. */
export async function activityLoadRows(db: Db, activityIds: string[]) {
  const rows = activityIds.length ? await db.selectFrom('activity_load').selectAll().where('activity_id', 'in', activityIds).execute() : [];
  return new Map(rows.map((r) => [r.activity_id, r]));
}

/** Per local day up to `toDay`, the user's summed stress (days with a stress only), of the sports matching the filter. */
export async function dailyStress(
  db: Db,
  userId: string,
  sports: string[] | undefined,
  toDay: string,
): Promise<{ day: string; stress: number }[]> {
  let q = db
    .selectFrom('activity_load')
    .select(['day', (eb) => eb.fn.sum<number>('stress').as('stress')])
    .where('user_id', '=', userId)
    .where('day', '<=', toDay)
    .where('stress', 'is not', null);
  if (sports?.length) q = q.where(() => sportsClause(sports));
  const rows = await q.groupBy('day').orderBy('day').execute();
  return rows.map((r) => ({ day: String(r.day), stress: Number(r.stress) }));
}

/** The load rows of activities in a local-day range, for the longitudinal zones. */
export async function loadBetween(db: Db, userId: string, fromDay: string, toDay: string, sports: string[] | undefined) {
  let q = db
    .selectFrom('activity_load')
    .select(['activity_id', 'day', 'sport', 'time_in_zones', 'stress'])
    .where('user_id', '=', userId)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay);
  if (sports?.length) q = q.where(() => sportsClause(sports));
  return q.orderBy('day').execute();
}
