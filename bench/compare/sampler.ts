import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { FAMILIES } from './families/index.ts';
import { type OpenFamily, type Row, treeAt } from './row.ts';

/**
 * A sampler of `npm run bench -- compare`: a process, started by bench/compare/side.ts, that opens
 * families of rows on a tree and takes samples when the driver asks, over the IPC channel. A
 * family isolated per side (the default) is opened in a sampler of its own tree (its working
 * directory); a family that shares the process (`isolation: 'shared'`) is opened twice in one
 * sampler, once per tree, so that both sides' code runs in the same process. Nothing runs between
 * requests, so two samples never run at the same time. Messages (all answered in order; `key` is
 * `<side>:<row id>`):
 *
 * - `{ op: 'open', side, root, families }` → `{ op: 'opened', rows: [{ id, label, family }], failed: [{ family, message }] }`
 * - `{ op: 'warm', key }` → `{ op: 'warmed', ms }`: the row run WARM_RUNS times and for WARM_MS
 *   at least (at most WARM_MAX_MS; a row's `warmMs` raises both), so that V8 has compiled it at its
 *   top tier; the fastest run's ms. `light: true`: a shorter warm-up (LIGHT_WARM_*) for rows without `warmMs`
 * - `{ op: 'sample', key, reps }` → `{ op: 'sampled', ms }`: `reps` runs, ms per operation (row.ts, `operations`).
 *   No garbage collection is forced between samples: a forced full collection before each made the
 *   kernel's 4 h ride twice as slow and three times as noisy (7.7 ms → 17 ms, spread ±1 → ±5 ms;
 *   40 runs each, one process), a state no real request meets.
 * - `{ op: 'profile', key, seconds, file }` → `{ op: 'profiled', runs }`: the row run for `seconds`
 *   under the V8 CPU profiler (the profile `node --cpu-prof` writes, of this row alone), saved to `file`
 * - `{ op: 'close' }`: the families closed, the process ends.
 *
 * A failed operation answers `{ op: 'failed', message }`.
 */
type Request =
  | { op: 'open'; side: string; root: string; families: string[] }
  | { op: 'warm'; key: string; light?: boolean }
  | { op: 'sample'; key: string; reps: number }
  | { op: 'profile'; key: string; seconds: number; file: string }
  | { op: 'close' };

const opened: OpenFamily[] = [];
const rows = new Map<string, Row>();
/** Warm-up of a row: at least WARM_RUNS runs and WARM_MS, at most WARM_MAX_MS (and 2 runs). */
const WARM_RUNS = 10;
const WARM_MS = 100;
const WARM_MAX_MS = 1000;
/**
 * A light warm-up (`light: true`, the forks after the first, whose operations per sample are
 * already chosen): at least LIGHT_WARM_RUNS runs and LIGHT_WARM_MS, at most LIGHT_WARM_MAX_MS. A
 * kernel's loops reach V8's top tier within its first runs (on-stack replacement); the full
 * warm-up of the engine family's 36 rows took 8.4 s a side, two thirds of a fork.
 */
const LIGHT_WARM_RUNS = 3;
const LIGHT_WARM_MS = 20;
const LIGHT_WARM_MAX_MS = 300;

async function once(row: Row): Promise<void> {
  const out = row.run();
  if (out instanceof Promise) await out;
}

async function handle(message: Request): Promise<object> {
  switch (message.op) {
    case 'open': {
      const listed: { id: string; label: string; family: string; sampleMs?: number }[] = [];
      const failed: { family: string; message: string }[] = [];
      for (const name of message.families) {
        const family = FAMILIES[name];
        if (!family) {
          failed.push({ family: name, message: 'no such family' });
          continue;
        }
        try {
          const open = await family.open(treeAt(message.root));
          opened.push(open);
          for (const row of open.rows) {
            rows.set(`${message.side}:${row.id}`, row);
            listed.push({ id: row.id, label: row.label, family: name, sampleMs: row.sampleMs });
          }
        } catch (err) {
          failed.push({ family: name, message: err instanceof Error ? err.message : String(err) });
        }
      }
      return { op: 'opened', rows: listed, failed };
    }
    case 'warm': {
      const row = rowOf(message.key);
      const started = performance.now();
      const light = message.light && row.warmMs === undefined;
      const least = light ? LIGHT_WARM_MS : (row.warmMs ?? WARM_MS);
      const most = light ? LIGHT_WARM_MAX_MS : Math.max(WARM_MAX_MS, least);
      const leastRuns = light ? LIGHT_WARM_RUNS : WARM_RUNS;
      let fastest = Number.POSITIVE_INFINITY;
      for (let runs = 0; ; runs++) {
        const spent = performance.now() - started;
        if ((runs >= leastRuns && spent >= least) || (runs >= 2 && spent >= most)) break;
        const t0 = performance.now();
        await once(row);
        fastest = Math.min(fastest, performance.now() - t0);
      }
      return { op: 'warmed', ms: fastest };
    }
    case 'sample': {
      const row = rowOf(message.key);
      const t0 = performance.now();
      for (let i = 0; i < message.reps; i++) await once(row);
      return { op: 'sampled', ms: (performance.now() - t0) / message.reps / (row.operations ?? 1) };
    }
    case 'profile': {
      const row = rowOf(message.key);
      const session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      const until = performance.now() + message.seconds * 1000;
      let runs = 0;
      while (runs === 0 || performance.now() < until) {
        await once(row);
        runs++;
      }
      const { profile } = await session.post('Profiler.stop');
      session.disconnect();
      writeFileSync(message.file, JSON.stringify(profile));
      return { op: 'profiled', runs };
    }
    case 'close': {
      for (const family of opened.splice(0)) await family.close();
      return { op: 'closed' };
    }
  }
}

function rowOf(key: string): Row {
  const row = rows.get(key);
  if (!row) throw new Error(`no row ${key} in this sampler`);
  return row;
}

let queue = Promise.resolve();
process.on('message', (message: Request) => {
  queue = queue.then(async () => {
    let answer: object;
    try {
      answer = await handle(message);
    } catch (err) {
      answer = { op: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    }
    // The families are closed: end without waiting on a straggling handle of the tree's code.
    process.send!(answer, () => message.op === 'close' && process.exit(0));
  });
});
process.send!({ op: 'ready' });
