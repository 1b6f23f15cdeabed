import path from 'node:path';
import type { TestService } from '../../../test/helpers/service.ts';
import { simulateRide } from '../../../test/helpers/synthetic.ts';
import type { Family, Row, Tree } from '../row.ts';
import { ScriptServer } from '../script-server.ts';
import { exportOf, inParallel, logOpened, startTreeService } from './tree-service.ts';

/**
 * The longitudinal benchmark (bench/longitudinal.ts) at one size: BENCH_COMPARE_LONGITUDINAL_ACTIVITIES
 * (default 300, as the gate's: at 1,000 one round took about 16 s, the script 5 s of it, and 2 minutes
 * held 6 rounds) rides of 30 min to 3 h within one year, made by this checkout's simulateRide with
 * bench/longitudinal.ts's seeds and schedule (the same rides on both sides) and stored by the tree's
 * bench/curves.ts storeSynthetic; on the tree's own service (2 engine threads, response cache off):
 * the longitudinal mean-max from raw streams with 5 `after` values, by duration at the default
 * durations and by intensity at every duration (JSON), and the year's power samples from
 * longitudinal-data (Parquet). Beside them, as a control, the DuckDB + numpy script of that bench
 * over the same sample files: code of this checkout on both sides, whose verdict should be "no
 * change". The script's answer is checked once against the service's, value for value.
 */
const ACTIVITIES = Number(process.env.BENCH_COMPARE_LONGITUDINAL_ACTIVITIES ?? 300);
const AFTER = [0, 250, 500, 1000, 1500];
const DAY = 86_400_000;
const NEWEST = Date.UTC(2026, 9, 31, 7);
const ENV = { CURVE_CACHE_SECONDS: '0', ENGINE_THREADS: '2', LOG_LEVEL: 'warn', COMPUTE_TIMEOUT_MS: '600000' };

type StoreSynthetic = (service: TestService, userId: string, a: object) => Promise<string>;

/** bench/longitudinal.ts's `seed`: ride `index` of `count`, spread over the year, power and heart rate. */
function ride(count: number, index: number) {
  const span = 364 * DAY;
  const start = NEWEST - span + Math.floor((index * span) / Math.max(1, count)) + (index % 7) * 3_600_000;
  const samples = simulateRide({ start: new Date(start), seconds: 1800 + ((index * 7919) % 9000), seed: 5000 + index });
  const channels = { power: Float64Array.from(samples, (s) => s.power), heart_rate: Float64Array.from(samples, (s) => s.heartRate) };
  return { start, channels, name: `ride-${index}.fit` };
}

/** The script's answer equals the service's JSON rows (duration, power, after), value for value, as bench/longitudinal.ts checks. */
function agree(script: (number | null)[][], service: Record<string, number[]>, durations: number[]): boolean {
  const want = new Map<string, number>();
  script.forEach((row, j) => row.forEach((v, k) => v !== null && want.set(`${AFTER[j]}/${durations[k]}`, v)));
  const got = new Map<string, number>();
  (service.duration ?? []).forEach((d, r) => got.set(`${service.after?.[r]}/${d}`, service.power![r]!));
  return want.size > 0 && want.size === got.size && [...want].every(([key, v]) => got.get(key) === v);
}

/**
 * Where a tree keeps an activity's sample file in its data directory: under its object-store key
 * (lib/object-store.ts sampleKey, since the object store) or at lib/storage.ts samplePath (before it).
 */
async function samplePathOf(tree: Tree): Promise<(dataDir: string, userId: string, id: string) => string> {
  const keys = (await tree.load('lib/object-store.ts').catch(() => ({}))) as { sampleKey?: (userId: string, id: string) => string };
  if (keys.sampleKey) {
    const sampleKey = keys.sampleKey;
    return (dataDir, userId, id) => path.join(path.resolve(dataDir), sampleKey(userId, id));
  }
  return exportOf<(dataDir: string, userId: string, id: string) => string>(tree, 'lib/storage.ts', 'samplePath');
}

export const longitudinalFamily: Family = {
  name: 'longitudinal',
  // A service per tree: each side's rows in its own process, in its own tree.
  isolation: 'process',
  // HTTP rows, with a database and worker threads behind them, are noisier than a kernel's: a higher
  // bar than the engine's 2 %, to be set from the A/A runs' bias (bench/README.md, "compare").
  threshold: 0.05,
  about:
    'longitudinal mean-max from raw streams (after, by duration and intensity) and longitudinal-data over HTTP (bench/longitudinal.ts); the DuckDB + numpy script as a control',
  async open(tree: Tree, options = {}) {
    const activities = options.activities ?? ACTIVITIES;
    const started = performance.now();
    const storeSynthetic = await exportOf<StoreSynthetic>(tree, 'bench/curves.ts', 'storeSynthetic');
    const samplePath = await samplePathOf(tree);
    const durations = Array.from(await exportOf<ArrayLike<number>>(tree, 'engine/curves/durations.ts', 'DEFAULT_DURATIONS'));

    const ts = await startTreeService(tree, ENV);
    let script: ScriptServer | undefined;
    const close = async () => {
      await script?.close();
      await ts.close();
    };
    try {
      await inParallel(activities, 4, (i) => storeSynthetic(ts.service, ts.userId, ride(activities, i)));
      await ts.settle();
      const listed = await ts.service.deps.db
        .selectFrom('activities')
        .select(['id'])
        .where('user_id', '=', ts.userId)
        .orderBy('start_time')
        .orderBy('id')
        .execute();
      const spec = {
        paths: listed.map((a) => samplePath(ts.service.config.DATA_DIR, ts.userId, a.id)),
        thresholds: AFTER.map((a) => a * 1000),
        durations,
      };

      const range = `start=${new Date(NEWEST - 364 * DAY).toISOString().slice(0, 10)}&end=${new Date(NEWEST).toISOString().slice(0, 10)}`;
      const meanMax = `/api/v1/activities/longitudinal-mean-max?metric=power&${range}&${AFTER.map((a) => `after=${a}`).join('&')}`;
      const byDuration = `${meanMax}&by=duration`;
      const byIntensity = `${meanMax}&by=intensity&durations=all`;
      const data = `/api/v1/activities/longitudinal-data?metrics=power&${range}`;

      script = new ScriptServer();
      const answer = await script.request<{ best: (number | null)[][] }>(spec);
      const served = JSON.parse(Buffer.from((await ts.get(byDuration, 'application/json')).body).toString());
      if (!agree(answer.best, served, durations)) {
        throw new Error(`the service and the DuckDB + numpy script disagree at ${listed.length} activities`);
      }

      // The HTTP rows read the whole body; the JSON is not parsed (a client's cost, not the service's).
      const rows: Row[] = [
        {
          id: 'longitudinal/by-duration-after-5',
          label: `by duration, ${AFTER.length} after values, ${durations.length} default durations, ${listed.length} rides (JSON)`,
          run: () => ts.get(byDuration, 'application/json'),
        },
        {
          id: 'longitudinal/by-intensity-after-5',
          label: `by intensity, ${AFTER.length} after values, every duration, ${listed.length} rides (JSON)`,
          run: () => ts.get(byIntensity, 'application/json'),
        },
        {
          id: 'longitudinal/data-parquet',
          label: `longitudinal-data, power, Parquet, ${listed.length} rides`,
          run: () => ts.get(data),
        },
        {
          id: 'longitudinal/duckdb-numpy-script',
          label: `control: DuckDB + numpy script, by duration, ${listed.length} rides (round trip)`,
          // The sample is the round trip as the sampler times it (the spec sent, the script's read and
          // compute, its answer back): what a user of the script waits for, Python's start-up aside.
          run: () => script!.request(spec),
        },
      ];
      logOpened('longitudinal', tree, started, `${listed.length} rides seeded, the script's answer checked`);
      return { rows, close };
    } catch (err) {
      await close();
      throw err;
    }
  },
};
