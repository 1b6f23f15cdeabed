import http from 'node:http';
import { recordTarget } from '../report.ts';
import { type ApiProcess, apiCpuSeconds, rssMb, startApi } from './api-process.ts';
import type { Row, Run } from './report.ts';
import { drive, get, type LoadStats, loadFields, mintTokens, summarize, type Tick, warmProcess } from './requests.ts';
import { groupSpecs } from './seed.ts';
import {
  CONNECTIONS,
  COUNTS,
  CURVE_PATH,
  OFF_GRID_AFTER,
  OFF_GRID_PATH,
  permutedPath,
  r1,
  RIDES,
  ROW_SECONDS,
  SOAK_SECONDS,
  TARGET,
  TICK_SECONDS,
} from './settings.ts';

/**
 * 1. Many athletes (`npm run bench -- many-users`, the `many` group), in one API process: each
 * athlete's first request, a row per U of BENCH_MANY_USERS, the largest U off the grid, the soak;
 * the RSS target over all of them.
 */

/** The soak's figures: its load, its RSS series and the max of its first and last thirds. */
export interface Soak {
  stats: LoadStats;
  firstThirdMb: number;
  lastThirdMb: number;
  series: { t: number; mb: number }[];
}

/** The many group's rows, in one API process stopped at the end; the soak's ticks and figures (none when BENCH_MANY_USERS_SECONDS is 0). */
export async function manyAthletes(run: Run): Promise<{ ticks: Tick[]; soak: Soak | undefined }> {
  const { bench, rss } = run;
  const many = bench.athletes.get(groupSpecs()[2]!.key)!;
  const most = COUNTS.at(-1)!;
  const api = await startApi(bench, run.port);
  run.api = api;
  rss.watch(api.pid);
  rss.phase = 'first pass';
  process.stdout.write(
    `API (pid ${api.pid}) on ${api.url}: default settings, CURVE_CACHE_SECONDS=0, API_RATE_LIMIT=1000000; RSS ${rssMb(api.pid)} MB at start\n`,
  );
  await warmProcess(bench, api, many[0]!);
  await firstPass(run, api, many.slice(0, most));
  const { oneRps } = await countRows(run, api, many);
  await offGridRow(run, api, many.slice(0, most), oneRps);
  const { ticks, soak } = SOAK_SECONDS > 0 ? await soakRow(run, api, many.slice(0, most)) : { ticks: [], soak: undefined };
  const loadPeak = rss.peak();
  await api.stop();
  run.api = undefined;
  recordTarget({
    benchmark: 'many-users',
    target: `API RSS ≤ 1 GB at default settings throughout (first pass, every U, the soak)${soak ? `, flat over ${SOAK_SECONDS} s (last third ≤ ${TARGET.flat}× the first)` : ''}`,
    figure: `peak ${loadPeak} MB${soak ? `; soak first third ${soak.firstThirdMb} MB → last third ${soak.lastThirdMb} MB` : ''}`,
    met: loadPeak <= TARGET.rssMb && (!soak || soak.lastThirdMb <= TARGET.flat * soak.firstThirdMb),
  });
  return { ticks, soak };
}

/** Every athlete's first request in this process, 12 at a time (columns loaded, or built from the sample files on the first run). */
async function firstPass(run: Run, api: ApiProcess, athletes: string[]): Promise<void> {
  const { bench, rss } = run;
  const most = COUNTS.at(-1)!;
  const tokens = await mintTokens(bench, api, athletes);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const ms: number[] = [];
  let errors = 0;
  let next = 0;
  const cpu0 = apiCpuSeconds(api.pid);
  const w0 = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      for (let k = next++; k < tokens.length; k = next++) {
        const a = await get(agent, api.url + CURVE_PATH, tokens[k]!).catch(() => undefined);
        if (a?.status === 200) ms.push(a.ms);
        else errors++;
      }
    }),
  );
  agent.destroy();
  const wall = (performance.now() - w0) / 1000;
  const d = summarize(ms);
  run.rows.push({
    workload: `first pass: each athlete's first request in this API process (warmed on athlete 0), ${CONNECTIONS} at a time`,
    athletes: most,
    rides: RIDES,
    requests: ms.length,
    errors,
    rps: r1(ms.length / wall),
    ...d,
    rss_peak_mb: rss.peak('first pass'),
    cpu_ms: r1(((apiCpuSeconds(api.pid) - cpu0) * 1000) / Math.max(1, tokens.length)),
  });
  process.stdout.write(
    `first pass over ${most} athletes: ${wall.toFixed(1)} s, p50 ${d.p50_ms} ms, p99 ${d.p99_ms} ms, ${errors} errors, RSS ${rss.sample()} MB\n`,
  );
}

/** A row per U of BENCH_MANY_USERS (at U = 1 another with every request computed); the target recorded at the largest U. */
async function countRows(run: Run, api: ApiProcess, many: string[]): Promise<{ oneRps: number | undefined }> {
  const { bench, rss, rows } = run;
  const most = COUNTS.at(-1)!;
  let oneRps: number | undefined;
  let oneDistinctRps: number | undefined;
  for (const u of COUNTS) {
    rss.phase = `U=${u}`;
    const tokens = await mintTokens(bench, api, many.slice(0, u));
    const stats = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: u });
    if (u === 1) {
      oneRps = stats.rps;
      oneDistinctRps = await distinctRow(run, api, tokens);
    }
    const share = oneRps === undefined ? undefined : stats.rps / oneRps;
    const checks = [
      stats.errors === 0,
      stats.p50_ms <= TARGET.p50_ms,
      stats.p99_ms <= TARGET.p99_ms,
      u === 1 || (share !== undefined && share >= TARGET.rpsShare),
    ];
    const row: Row = {
      workload: `fatigue curves, random athlete of ${u}`,
      athletes: u,
      rides: RIDES,
      ...loadFields(stats, rss.peak(rss.phase)),
      target: `p50 ≤ ${TARGET.p50_ms} ms, p99 ≤ ${TARGET.p99_ms} ms${u === 1 ? '' : ', ≥ 1/3 of U = 1 req/s'}, no errors`,
      met: checks.every(Boolean),
      note: `${u === 1 ? '' : share === undefined ? 'no U = 1 row; ' : `${(share * 100).toFixed(0)} % of U = 1's req/s${oneDistinctRps ? ` (${((stats.rps / oneDistinctRps) * 100).toFixed(0)} % of U = 1's with every request computed)` : ''}; `}statuses ${JSON.stringify(stats.statuses)}`,
    };
    rows.push(row);
    process.stdout.write(
      `U = ${u}: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, max ${stats.max_ms} ms, ${stats.errors} errors, API ${stats.api_cpu_ms_per_request} ms CPU per request, RSS peak ${row.rss_peak_mb} MB\n`,
    );
    if (u === most) {
      recordTarget({
        benchmark: 'many-users',
        target: `fatigue curves for ${u} athletes × ${RIDES} rides, random athlete, ${CONNECTIONS} connections, cache off: p50 ≤ ${TARGET.p50_ms} ms, p99 ≤ ${TARGET.p99_ms} ms, ≥ 1/3 of one athlete's req/s, no errors`,
        figure: `p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, ${stats.rps} req/s${share === undefined ? '' : ` (${(share * 100).toFixed(0)} % of U = 1's ${oneRps}${oneDistinctRps ? `; ${((stats.rps / oneDistinctRps) * 100).toFixed(0)} % of its ${oneDistinctRps} with every request computed` : ''})`}, ${stats.errors} errors`,
        met: row.met === true,
      });
    }
  }
  return { oneRps };
}

/**
 * One athlete again, every request computed: at U = 1 the 12 connections mostly ask what another one
 * is computing, and identical requests in flight are computed once. Returns its req/s.
 */
async function distinctRow(run: Run, api: ApiProcess, tokens: string[]): Promise<number> {
  const { rss } = run;
  const distinct = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: 1, path: permutedPath });
  run.rows.push({
    workload: `fatigue curves, 1 athlete, every request computed (the after values in another order each time)`,
    athletes: 1,
    rides: RIDES,
    ...loadFields(distinct, rss.peak(rss.phase)),
    note: `statuses ${JSON.stringify(distinct.statuses)}`,
  });
  process.stdout.write(
    `U = 1, every request computed: ${distinct.rps} req/s, p50 ${distinct.p50_ms} ms, p99 ${distinct.p99_ms} ms, ${distinct.errors} errors, API ${distinct.api_cpu_ms_per_request} ms CPU per request\n`,
  );
  return distinct.rps;
}

/** The same load off the grid: every request computed from the rides' samples. */
async function offGridRow(run: Run, api: ApiProcess, athletes: string[], oneRps: number | undefined): Promise<void> {
  const { bench, rss } = run;
  const most = COUNTS.at(-1)!;
  rss.phase = `U=${most} off the grid`;
  const tokens = await mintTokens(bench, api, athletes);
  const stats = await drive(api, tokens, { seconds: ROW_SECONDS, warmupSeconds: 2, seed: most, path: OFF_GRID_PATH });
  const share = oneRps === undefined ? undefined : stats.rps / oneRps;
  run.rows.push({
    workload: `fatigue curves off the 250 kJ grid (after ${OFF_GRID_AFTER.join(', ')} kJ: from the samples), random athlete of ${most}`,
    athletes: most,
    rides: RIDES,
    ...loadFields(stats, rss.peak(rss.phase)),
    note: `${share === undefined ? '' : `${(share * 100).toFixed(0)} % of U = 1's req/s (on the grid); `}statuses ${JSON.stringify(stats.statuses)}`,
  });
  process.stdout.write(
    `U = ${most} off the grid: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, max ${stats.max_ms} ms, ${stats.errors} errors, API ${stats.api_cpu_ms_per_request} ms CPU per request\n`,
  );
}

/** BENCH_MANY_USERS_SECONDS at the largest U, a line every TICK_SECONDS; its RSS, first third against last. */
async function soakRow(run: Run, api: ApiProcess, athletes: string[]): Promise<{ ticks: Tick[]; soak: Soak }> {
  const { bench, rss } = run;
  const most = COUNTS.at(-1)!;
  rss.phase = 'soak';
  const tokens = await mintTokens(bench, api, athletes);
  process.stdout.write(`\nsoak: ${SOAK_SECONDS} s at U = ${most}, every ${TICK_SECONDS} s:\n`);
  const ticks: Tick[] = [];
  const stats = await drive(api, tokens, {
    seconds: SOAK_SECONDS,
    warmupSeconds: 0,
    seed: 7,
    onTick: (t) => {
      ticks.push(t);
      process.stdout.write(
        `  ${t.at_s} s: ${t.rps} req/s, p50 ${t.p50_ms} ms, p99 ${t.p99_ms} ms, errors ${t.errors}, RSS ${t.rss_mb} MB\n`,
      );
    },
  });
  const series = rss.series.filter((x) => x.phase === 'soak').map(({ t, mb }) => ({ t, mb }));
  const third = Math.max(1, Math.floor(series.length / 3));
  const firstThirdMb = Math.max(...series.slice(0, third).map((x) => x.mb));
  const lastThirdMb = Math.max(...series.slice(-third).map((x) => x.mb));
  const soak = { stats, firstThirdMb, lastThirdMb, series };
  run.rows.push({
    workload: `soak: ${SOAK_SECONDS} s, random athlete of ${most}`,
    athletes: most,
    rides: RIDES,
    ...loadFields(stats, rss.peak('soak')),
    target: `RSS flat: last third's max ≤ ${TARGET.flat}× the first third's`,
    met: lastThirdMb <= TARGET.flat * firstThirdMb && stats.errors === 0,
    note: `RSS max first third ${firstThirdMb} MB → last third ${lastThirdMb} MB; statuses ${JSON.stringify(stats.statuses)}`,
  });
  process.stdout.write(
    `soak: ${stats.rps} req/s, p50 ${stats.p50_ms} ms, p99 ${stats.p99_ms} ms, ${stats.errors} errors; RSS max first third ${firstThirdMb} MB, last third ${lastThirdMb} MB, peak ${rss.peak('soak')} MB\n`,
  );
  return { ticks, soak };
}
