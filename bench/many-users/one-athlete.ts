import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DURATIONS } from '../../engine/curves/durations.ts';
import { sampleKey } from '../../lib/object-store.ts';
import { objectFile } from '../../lib/object-store-local.ts';
import { recordTarget, ROOT } from '../report.ts';
import type { ApiProcess } from './api-process.ts';
import type { Run } from './report.ts';
import { get } from './requests.ts';
import { AFTER, CURVE_PATH, DIR, OFF_GRID_AFTER, OFF_GRID_PATH, p50, r1, RAW_RUNS, SCRIPT_RUNS, TARGET } from './settings.ts';

/**
 * 3. One athlete's fatigue curves (`npm run bench -- many-users`, the dense athlete: FIRST_RIDES
 * rides within the year), beside the script a user would run instead: on the grid (the rides' grid
 * entries) and off it (their samples).
 */

interface Variant {
  label: string;
  after: number[];
  path: string;
}

/** What the script reads: the athlete's sample files, the durations, and the rides' count and samples for the label. */
interface Inputs {
  paths: string[];
  durations: number[];
  rides: number;
  samples: number;
}

/** A row and a target on the grid and off it; `api` (run.api, the first requests' second process) stopped after. */
export async function oneAthlete(run: Run, api: ApiProcess, token: string, denseId: string): Promise<void> {
  const listed = await run.bench.deps.db
    .selectFrom('activities')
    .select(['id', 'samples'])
    .where('user_id', '=', denseId)
    .orderBy('start_time')
    .orderBy('id')
    .execute();
  const inputs: Inputs = {
    paths: listed.map((a) => objectFile(DIR, sampleKey(denseId, a.id))),
    durations: Array.from(DEFAULT_DURATIONS),
    rides: listed.length,
    samples: listed.reduce((n, a) => n + a.samples, 0),
  };
  for (const variant of [
    { label: 'on the 250 kJ grid', after: AFTER, path: CURVE_PATH },
    { label: 'off the grid, from raw streams', after: OFF_GRID_AFTER, path: OFF_GRID_PATH },
  ])
    await variantRow(run, api, token, variant, inputs);
  await api.stop();
  run.api = undefined;
}

/** RAW_RUNS requests one at a time (JSON), the script SCRIPT_RUNS times, its first answer checked against the service's last. */
async function variantRow(run: Run, api: ApiProcess, token: string, variant: Variant, inputs: Inputs): Promise<void> {
  const { paths, durations } = inputs;
  run.rss.phase = `one athlete, ${variant.label}`;
  const runs: number[] = [];
  let last: Record<string, unknown[]> | undefined;
  for (let k = 0; k < RAW_RUNS; k++) {
    const a = await get(undefined, api.url + variant.path, token, 'application/json');
    if (a.status !== 200) throw new Error(`${variant.label}: ${a.status} ${a.body.toString().slice(0, 300)}`);
    runs.push(a.ms);
    last = JSON.parse(a.body.toString()) as Record<string, unknown[]>;
  }
  const scriptRuns: number[] = [];
  let scriptError: string | undefined;
  for (let k = 0; k < SCRIPT_RUNS; k++) {
    const r = script(paths, durations, variant.after);
    if ('error' in r) {
      scriptError = r.error;
      break;
    }
    scriptRuns.push(r.seconds * 1000);
    if (k === 0 && last) {
      // The script's answers, value for value, against the service's rows (after, duration).
      const want = new Map<string, number>();
      r.best.forEach((row, j) => row.forEach((v, d) => v !== null && want.set(`${variant.after[j]}/${durations[d]}`, v)));
      const got = new Map<string, number>();
      (last.duration as number[]).forEach((d, i) => got.set(`${(last!.after as number[])[i]}/${d}`, (last!.power as number[])[i]!));
      const same = want.size === got.size && [...want].every(([key, v]) => got.get(key) === v);
      if (!same) throw new Error(`${variant.label}: the service and the script disagree (${got.size} vs ${want.size} values)`);
    }
  }
  if (scriptError) run.notes.push(`baseline script unavailable (${scriptError}); pip install duckdb numpy`);
  const serviceP50 = p50(runs);
  const scriptP50 = scriptRuns.length ? p50(scriptRuns) : undefined;
  const met = serviceP50 <= TARGET.rawMs && scriptP50 !== undefined && scriptP50 >= TARGET.rawSpeedup * serviceP50;
  const what = `one athlete's fatigue curves ${variant.label} (after ${variant.after.join(', ')} kJ), ${inputs.rides} rides within the year (${(inputs.samples / 1e6).toFixed(1)} M samples)`;
  run.rows.push({
    workload: `${what}, JSON, warm`,
    athletes: 1,
    rides: inputs.rides,
    requests: runs.length,
    errors: 0,
    p50_ms: serviceP50,
    max_ms: r1(Math.max(...runs)),
    ...(scriptP50 === undefined ? {} : { baseline: { name: 'DuckDB + numpy script', p50_ms: scriptP50 } }),
    target: `p50 ≤ ${TARGET.rawMs} ms and ≥ ${TARGET.rawSpeedup}× the script`,
    met,
  });
  recordTarget({
    benchmark: 'many-users',
    target: `${what}, default durations: p50 ≤ ${TARGET.rawMs} ms and ≥ ${TARGET.rawSpeedup}× a DuckDB + numpy script`,
    figure: `p50 ${serviceP50} ms${scriptP50 === undefined ? ', no script' : `, script ${scriptP50} ms (${(scriptP50 / serviceP50).toFixed(1)}×)`}`,
    met,
  });
}

/** The script a user would run instead (bench/longitudinal.ts calls it the same way): bench/longitudinal_baseline.py, DuckDB + numpy. */
function script(paths: string[], durations: number[], after: number[]): { seconds: number; best: (number | null)[][] } | { error: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-many-users-'));
  try {
    const input = path.join(dir, 'input.json');
    writeFileSync(input, JSON.stringify({ paths, thresholds: after.map((a) => a * 1000), durations }));
    const run = spawnSync('python3', [path.join(ROOT, 'bench', 'longitudinal_baseline.py'), input], {
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    });
    if (run.status !== 0) return { error: (run.stderr || run.error?.message || 'failed').trim().split('\n').at(-1)! };
    return JSON.parse(run.stdout) as { seconds: number; best: (number | null)[][] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
