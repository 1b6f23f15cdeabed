import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { columnsDir } from '../../lib/storage.ts';
import { recordTarget } from '../report.ts';
import { type ApiProcess, startApi } from './api-process.ts';
import type { Run } from './report.ts';
import { get, mintTokens, warmProcess } from './requests.ts';
import { derivedAsIngested, groupSpecs } from './seed.ts';
import { CURVE_PATH, DIR, FIRST_ATHLETES, FIRST_RIDES, MB, p50, r1, TARGET } from './settings.ts';

/**
 * 2. First requests (`npm run bench -- many-users`, the `first` group and the dense athlete): each
 * athlete's first request at 1,000 rides, one at a time, in a fresh API process, with its derived
 * files as ingestion leaves them, then in another fresh process with none.
 */

/** One athlete's first requests: with its derived files (cold) and without (no_derived). */
export interface FirstRequest {
  group: string;
  athlete: number;
  rides: number;
  cold_ms: number;
  no_derived_ms: number;
  derived_mb: number;
}

interface Subject {
  id: string;
  group: string;
  i: number;
}

/**
 * The first requests, their rows and target. The API process of the second pass is left running
 * (run.api) for the one-athlete rows; returned with the dense athlete's id and token.
 */
export async function firstRequests(
  run: Run,
): Promise<{ firstRequests: FirstRequest[]; api: ApiProcess; denseId: string; denseToken: string }> {
  const { bench } = run;
  const [firstGroup, denseGroup] = groupSpecs();
  const firstIds = bench.athletes.get(firstGroup!.key)!;
  const denseId = bench.athletes.get(denseGroup!.key)![0]!;
  const subjects = [...firstIds.map((id, i) => ({ id, group: firstGroup!.key, i })), { id: denseId, group: denseGroup!.key, i: 0 }];
  // Each athlete's derived files as ingestion leaves them (earlier runs' requests may have changed them).
  const d0 = performance.now();
  for (const s of subjects) await derivedAsIngested(bench, s.group === firstGroup!.key ? firstGroup! : denseGroup!, s.i, s.id);
  const derivedMb = new Map(subjects.map((s) => [s.id, r1(dirBytes(columnsDir(DIR, s.id)) / MB)]));
  process.stdout.write(
    `\nderived files of the ${subjects.length} athletes with ${FIRST_RIDES} rides appended ride by ride, as the ingest job does, in ${((performance.now() - d0) / 1000).toFixed(1)} s\n`,
  );
  const evicting: { error?: string } = {};
  const cold = await firstPass(run, subjects, 'first request', evicting);
  await cold.proc.stop();
  for (const s of subjects) rmSync(columnsDir(DIR, s.id), { recursive: true, force: true });
  const bare = await firstPass(run, subjects, 'no derived files', evicting);
  run.api = bare.proc;
  const firstRequests = subjects.map((s, k) => ({
    group: s.group,
    athlete: s.i,
    rides: FIRST_RIDES,
    cold_ms: cold.ms[k]!,
    no_derived_ms: bare.ms[k]!,
    derived_mb: derivedMb.get(s.id)!,
  }));
  if (evicting.error)
    run.notes.push(
      `the athletes' files could not be dropped from the page cache (${evicting.error}): the first requests read them from memory`,
    );
  firstRequestRows(run, firstRequests, firstGroup!.key);
  return { firstRequests, api: bare.proc, denseId, denseToken: bare.tokens.at(-1)! };
}

/**
 * In a fresh API process (warmed on the many group's athlete 0), each subject's first request, one at
 * a time, its files dropped from the page cache just before (until an eviction fails: `evicting.error`).
 */
async function firstPass(
  run: Run,
  subjects: Subject[],
  label: string,
  evicting: { error?: string },
): Promise<{ proc: ApiProcess; ms: number[]; tokens: string[] }> {
  const { bench, rss } = run;
  const many = bench.athletes.get(groupSpecs()[2]!.key)!;
  const proc = await startApi(bench, run.port);
  rss.watch(proc.pid);
  rss.phase = label;
  await warmProcess(bench, proc, many[0]!);
  const tokens = await mintTokens(
    bench,
    proc,
    subjects.map((s) => s.id),
  );
  const out: number[] = [];
  for (let k = 0; k < subjects.length; k++) {
    evicting.error ??= evict([columnsDir(DIR, subjects[k]!.id), path.join(DIR, 'users', subjects[k]!.id, 'activities')]);
    const a = await get(undefined, proc.url + CURVE_PATH, tokens[k]!);
    if (a.status !== 200) throw new Error(`${label}: ${a.status} ${a.body.toString().slice(0, 300)}`);
    out.push(r1(a.ms));
  }
  return { proc, ms: out, tokens };
}

/** Each athlete's first requests printed; the rows of the first group (p50 over its athletes) and the target. */
function firstRequestRows(run: Run, firstRequests: FirstRequest[], firstKey: string): void {
  process.stdout.write(
    `\nfirst request of an athlete with ${FIRST_RIDES} rides (the last year), one at a time, each in a fresh API process, the athlete's files dropped from the page cache first:\n`,
  );
  for (const f of firstRequests) {
    process.stdout.write(
      `  ${f.group} #${f.athlete}: ${f.cold_ms} ms (derived files ${f.derived_mb} MB); with no derived files ${f.no_derived_ms} ms\n`,
    );
  }
  const firstCold = firstRequests.filter((f) => f.group === firstKey);
  const coldP50 = p50(firstCold.map((f) => f.cold_ms));
  const bareP50 = p50(firstCold.map((f) => f.no_derived_ms));
  run.rows.push({
    workload: `first request, athlete nobody asked for yet (${FIRST_RIDES} rides over 3 years, derived files as ingestion leaves them, out of the page cache)`,
    athletes: FIRST_ATHLETES,
    rides: FIRST_RIDES,
    requests: firstCold.length,
    errors: 0,
    p50_ms: coldP50,
    max_ms: Math.max(...firstCold.map((f) => f.cold_ms)),
    target: `p50 ≤ ${TARGET.firstMs} ms`,
    met: coldP50 <= TARGET.firstMs,
    note: `each: ${firstCold.map((f) => f.cold_ms).join(', ')} ms; ${FIRST_RIDES} rides within the year: ${firstRequests.at(-1)!.cold_ms} ms`,
  });
  run.rows.push({
    workload: `first request with no derived files (columns/ removed; sample files out of the page cache)`,
    athletes: FIRST_ATHLETES,
    rides: FIRST_RIDES,
    requests: firstCold.length,
    errors: 0,
    p50_ms: bareP50,
    max_ms: Math.max(...firstCold.map((f) => f.no_derived_ms)),
    note: `each: ${firstCold.map((f) => f.no_derived_ms).join(', ')} ms; ${FIRST_RIDES} rides within the year: ${firstRequests.at(-1)!.no_derived_ms} ms`,
  });
  recordTarget({
    benchmark: 'many-users',
    target: `first fatigue-curve request of an athlete with ${FIRST_RIDES} rides nobody asked for yet: p50 ≤ ${TARGET.firstMs} ms`,
    figure: `p50 ${coldP50} ms over ${firstCold.length} athletes (${firstCold.map((f) => f.cold_ms).join(', ')}); with no derived files ${bareP50} ms`,
    met: coldP50 <= TARGET.firstMs,
  });
}

/**
 * The files out of the page cache (fsync, then POSIX_FADV_DONTNEED, by python): an athlete nobody
 * asked for in a while has its files on disk, not in memory. Returns why not when it could not.
 */
function evict(dirs: string[]): string | undefined {
  const code = [
    'import os, sys',
    'for d in sys.argv[1:]:',
    '    for root, _, files in os.walk(d):',
    '        for f in files:',
    '            fd = os.open(os.path.join(root, f), os.O_RDONLY)',
    '            try:',
    '                os.fsync(fd)',
    '                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)',
    '            finally:',
    '                os.close(fd)',
  ].join('\n');
  const run = spawnSync('python3', ['-c', code, ...dirs.filter((d) => existsSync(d))], { encoding: 'utf8' });
  return run.status === 0 ? undefined : (run.stderr || run.error?.message || 'failed').trim().split('\n').at(-1);
}

function dirBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true }))
    n += e.isDirectory() ? dirBytes(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).size;
  return n;
}
