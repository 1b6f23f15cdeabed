import { zeroFilled } from '../../../engine/curves/activity-curves.ts';
import { meanMaxAll } from '../../../engine/curves/mean-max.ts';
import type { TestService } from '../../../test/helpers/service.ts';
import { curveInputs, rideChannels, simulateRide } from '../../../test/helpers/synthetic.ts';
import type { Family, Row, Tree } from '../row.ts';
import { exportOf, inParallel, logOpened, startTreeService } from './tree-service.ts';

/**
 * The curve benchmark's rows that are one number per sample (bench/curves.ts): AWD and the
 * value-indexed view of a synthetic 4 h ride, the longitudinal merge of the stored curves of a
 * history, and over HTTP, on the tree's own service with its response cache off, the longitudinal
 * mean-max as Parquet and with 5 `after` values over the last year.
 *
 * The history: BENCH_COMPARE_CURVES_ACTIVITIES (default 300) rides of 30 min to 3 h on consecutive
 * days, the schedule of bench/curves.ts's seedHistory, made by this checkout's simulateRide (fixed
 * seeds: the same rides on both sides); each side computes their curves with its engine pool and
 * stores them with its bench/curves.ts storeSynthetic, as ingestion would.
 */
const ACTIVITIES = Number(process.env.BENCH_COMPARE_CURVES_ACTIVITIES ?? 300);
const DAY = 86_400_000;
export const NEWEST = Date.UTC(2026, 9, 31, 7);
const AFTER = [0, 250, 500, 1000, 1500];
/** The service as bench/curves.ts runs it: every request computes, a 2-thread engine pool. */
const ENV = { CURVE_CACHE_SECONDS: '0', ENGINE_THREADS: '2', LOG_LEVEL: 'warn', COMPUTE_TIMEOUT_MS: '120000' };

export type StoreSynthetic = (service: TestService, userId: string, a: object) => Promise<string>;
interface StoredRow {
  buffer: Uint8Array;
  second: Uint8Array | null;
}
type Pack = (rows: StoredRow[], which: 'buffer' | 'second') => unknown;

/** bench/curves.ts seedHistory's ride `i` of `count`, with the tree's curves, stored by the tree. */
export async function seedRide(service: TestService, userId: string, storeSynthetic: StoreSynthetic, count: number, i: number) {
  const start = NEWEST - (count - 1 - i) * DAY;
  const samples = simulateRide({ start: new Date(start), seconds: 1800 + ((i * 7919) % 9000), seed: 1000 + i });
  const channels = rideChannels(samples);
  const curves = await service.deps.engine.pool.runCurves(curveInputs(channels));
  const sport = i % 5 === 0 ? 'cycling.road' : 'cycling';
  await storeSynthetic(service, userId, { start, channels, name: `ride-${1000 + i}.fit`, sport, utcOffsetSeconds: 3600, curves });
}

/**
 * The tree's merge of stored level curves and the packing of its input, as that tree's bench/curves.ts
 * pairs them: packStored with engine/curves/stored-curves.ts's merge (the curve codec, issue 25), or
 * before it packInt32 with engine/curves/longitudinal.ts's.
 */
async function mergerOf(tree: Tree): Promise<{ pack: Pack; merge: (duration: unknown, start: unknown) => unknown }> {
  const db = await tree.load('db/curves.ts'); // loadable: curvesOf was found in it
  if (db.packStored) return { pack: db.packStored, merge: await exportOf(tree, 'engine/curves/stored-curves.ts', 'mergeStoredLevels') };
  if (db.packInt32) {
    return {
      pack: (rows, which) => db.packInt32(rows.map((r) => r[which])),
      merge: await exportOf(tree, 'engine/curves/longitudinal.ts', 'mergeStoredLevels'),
    };
  }
  throw new Error(`db/curves.ts of the tree ${tree.root} exports neither packStored nor packInt32`);
}

/**
 * The HTTP rows: warmed for 2 s (its service's engine threads and connections, not only this
 * process's code) and sampled 150 ms at a time. With compare's defaults (10 runs, 20 ms samples)
 * they read 15–50 % faster on whichever side was set up second (bench/README.md, "compare").
 */
const HTTP_ROW = { warmMs: 2000, sampleMs: 150 };

export const curvesFamily: Family = {
  name: 'curves',
  // A service per tree: each side's rows in its own process, in its own tree.
  isolation: 'process',
  // HTTP rows, with a database and worker threads behind them, are noisier than a kernel's: a higher
  // bar than the engine's 2 %, to be set from the A/A runs' bias (bench/README.md, "compare").
  threshold: 0.05,
  // Its CPU rows carry a process's JIT bias (the stored-curve merge read 5.8 % apart, ±1.5 %, in a
  // one-fork A/A run): three forks, each seeding its own history.
  forks: 3,
  about:
    'AWD, value-indexed view, stored-curve merge and the longitudinal mean-max over HTTP (bench/curves.ts), on a history of synthetic rides',
  async open(tree: Tree, options = {}) {
    const activities = options.activities ?? ACTIVITIES;
    const started = performance.now();
    const accumulatedWorkDuration = await exportOf<(x: Float64Array, step: number) => unknown>(
      tree,
      'engine/curves/awd.ts',
      'accumulatedWorkDuration',
    );
    const valueIndexed = await exportOf<(best: Float64Array, start: Int32Array, step: number) => unknown>(
      tree,
      'engine/curves/value-indexed.ts',
      'valueIndexed',
    );
    const curvesOf = await exportOf<(...args: unknown[]) => Promise<StoredRow[]>>(tree, 'db/curves.ts', 'curvesOf');
    const { pack, merge } = await mergerOf(tree);
    const storeSynthetic = await exportOf<StoreSynthetic>(tree, 'bench/curves.ts', 'storeSynthetic');

    // One activity: a 4 h ride and its all-durations curve, made by this checkout (the same input for both sides).
    const power = Float64Array.from(simulateRide({ start: new Date(0), seconds: 4 * 3600, seed: 7 }), (s) => s.power);
    const curve = meanMaxAll(zeroFilled(power));

    const ts = await startTreeService(tree, ENV);
    try {
      await inParallel(activities, 4, (i) => seedRide(ts.service, ts.userId, storeSynthetic, activities, i));
      await ts.settle();
      const stored = await curvesOf(ts.service.deps.db, ts.userId, {}, 'power', 'levels');
      if (stored.length !== activities) throw new Error(`${stored.length} stored power curves for ${activities} rides`);
      const duration = pack(stored, 'buffer');
      const starts = pack(stored, 'second');

      const end = new Date(NEWEST).toISOString().slice(0, 10);
      const startDay = new Date(NEWEST - 364 * DAY).toISOString().slice(0, 10);
      const afterQuery = `/api/v1/activities/longitudinal-mean-max?metric=power&start=${startDay}&end=${end}&${AFTER.map((a) => `after=${a}`).join('&')}`;
      const parquet = await ts.get('/api/v1/activities/longitudinal-mean-max?metric=power');
      if (!parquet.type?.includes('parquet')) throw new Error(`longitudinal-mean-max answered ${parquet.type}, not Parquet`);

      const n = Math.min(activities, 365);
      const rows: Row[] = [
        {
          id: 'curves/awd-4h',
          label: 'AWD of a 4 h ride (power, 1 W levels)',
          run: () => accumulatedWorkDuration(power, 1),
        },
        {
          id: 'curves/value-indexed-4h',
          label: 'value-indexed view of a 4 h ride',
          run: () => valueIndexed(curve.best, curve.start, 1),
        },
        {
          id: 'curves/merge-stored',
          label: `longitudinal merge of ${stored.length} stored curves, from their stored bytes`,
          run: () => merge(duration, starts),
        },
        {
          id: 'curves/http-longitudinal-parquet',
          label: `GET longitudinal-mean-max → Parquet, ${stored.length} activities (no cache)`,
          run: () => ts.get('/api/v1/activities/longitudinal-mean-max?metric=power'),
          ...HTTP_ROW,
        },
        {
          id: 'curves/http-after-5-year',
          label: `GET longitudinal-mean-max, 5 after values, 1 year (${n} activities), 2 engine threads`,
          run: () => ts.get(afterQuery),
          ...HTTP_ROW,
        },
      ];
      logOpened('curves', tree, started, `${activities} rides seeded`);
      return { rows, close: () => ts.close() };
    } catch (err) {
      await ts.close();
      throw err;
    }
  },
};
