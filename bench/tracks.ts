import { spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { ingestFile } from '../engine/ingest/ingest.ts';
import { parseTcx } from '../engine/ingest/tcx.ts';
import { fitFileParserDecode } from './fit-decode.ts';
import { naiveLocal, runChild } from './backfill.ts';
import { syntheticHistory } from '../test/helpers/synthetic.ts';
import { buildRideTcx, type ExportFile, syntheticExport } from '../test/helpers/synthetic-tracks.ts';
import { formatTable, recordTarget, ROOT, round2, writeReport } from './report.ts';

/**
 * Importing a decade as a platform exports it (issue 39: ≥ 20 files/s on 2 cores, a 3.5 MB TCX parsed in
 * ≤ 100 ms, worker RSS ≤ 500 MB): a synthetic Strava-style export of BENCH_TRACKS_FILES (default 2,000)
 * rides of 30 min to 3 h over ten years (FIT 60 %, GPX 25 %, TCX 15 %, every other file gzipped, with
 * `activities.csv`), POSTed to /api/v1/activities/backfill of a service whose workers run in their own
 * process (bench/backfill-service.ts), beside, in the same run:
 * - the same service importing a FIT-only history of as many rides (the format we read fastest);
 * - what a user would do instead: parse the GPX and TCX files with Python's lxml (bench/tracks_baseline.py,
 *   iterparse into numpy arrays), and decode the FIT files with fit-file-parser, one after another;
 * - the engine's ingest task on the same files, one after another, in this process, per format.
 * The 3.5 MB TCX: one synthetic Garmin Connect TCX of that size, ingested (parse + resample + summary +
 * curves) 15 times in this process; the median is the figure.
 */
const COUNT = Number(process.env.BENCH_TRACKS_FILES ?? 2000);
/** The in-process baselines read this many files of the export (each format in its share). */
const SAMPLE = Number(process.env.BENCH_TRACKS_SAMPLE ?? 300);
const TARGET_FILES_PER_S = 20;
const TARGET_TCX_MS = 100;
const TARGET_RSS_MB = 500;

/** The files by format. */
function byFormat(files: ExportFile[]): Partial<Record<ExportFile['format'], ExportFile[]>> {
  const out: Partial<Record<ExportFile['format'], ExportFile[]>> = {};
  for (const f of files) (out[f.format] ??= []).push(f);
  return out;
}

function python(paths: string[]): { seconds: number; points: number; by_format: Record<string, number> } | { error: string } {
  const input = path.join(os.tmpdir(), `tds-tracks-baseline-${process.pid}.json`);
  writeFileSync(input, JSON.stringify({ paths }));
  const run = spawnSync('python3', [path.join(ROOT, 'bench', 'tracks_baseline.py'), input], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (run.status !== 0) return { error: (run.stderr || run.error?.message || 'python3 failed').trim().split('\n').at(-1)! };
  return JSON.parse(run.stdout);
}

async function engineSeconds(files: ExportFile[]): Promise<number> {
  const t = performance.now();
  for (const f of files) {
    const raw = readFileSync(f.path);
    const bytes = f.gzip ? zlib.gunzipSync(raw) : raw;
    const r = await ingestFile({ format: f.format, bytes, sport: null });
    if (!r.ok) throw new Error(`engine ingest of ${f.name}: ${r.code} ${r.message}`);
  }
  return (performance.now() - t) / 1000;
}

/** In this process and in Python, on the sample: lxml on its GPX and TCX, fit-file-parser on its FIT, the engine task per format. */
async function baselines(sampleBy: ReturnType<typeof byFormat>) {
  const tracks = [...(sampleBy.gpx ?? []), ...(sampleBy.tcx ?? [])];
  const lxml = python(tracks.map((f) => f.path));
  const t = performance.now();
  for (const f of sampleBy.fit ?? []) {
    const raw = readFileSync(f.path);
    fitFileParserDecode(f.gzip ? zlib.gunzipSync(raw) : raw);
  }
  const fitDecodeSeconds = (performance.now() - t) / 1000;
  const engine = {
    fit: await engineSeconds(sampleBy.fit ?? []),
    gpx: await engineSeconds(sampleBy.gpx ?? []),
    tcx: await engineSeconds(sampleBy.tcx ?? []),
  };
  return { lxml, fitDecodeSeconds, engine };
}

/** A Garmin Connect TCX of about 3.5 MB: parsed (engine/ingest/tcx.ts) and ingested 15 times each after a warm-up; medians and fastest, ms. */
async function tcxFigure() {
  const text = buildRideTcx({ start: new Date('2025-06-01T07:00:00Z'), seconds: 8_400, seed: 35 });
  const bytes = Buffer.from(text);
  const timed = async (run: () => unknown) => {
    const times: number[] = [];
    for (let i = 0; i < 16; i++) {
      const t = performance.now();
      await run();
      if (i > 0) times.push(performance.now() - t); // the first warms the JIT
    }
    times.sort((a, b) => a - b);
    return { median: times[times.length >> 1]!, fastest: times[0]! };
  };
  const parse = await timed(() => parseTcx(bytes));
  const ingest = await timed(async () => {
    const r = await ingestFile({ format: 'tcx', bytes, sport: null });
    if (!r.ok) throw new Error(`3.5 MB TCX: ${r.code} ${r.message}`);
  });
  return {
    mb: bytes.length / 1024 / 1024,
    parse_median_ms: parse.median,
    parse_fastest_ms: parse.fastest,
    median_ms: ingest.median,
    fastest_ms: ingest.fastest,
  };
}

export async function benchTracks() {
  process.stdout.write(`\n== tracks: a ${COUNT}-ride Strava-style export (FIT, GPX, TCX, half gzipped), POST → completed\n`);
  const progress = (what: string) => (done: number) => {
    if (done % 100 === 0 || done === COUNT) process.stdout.write(`  generating ${what}: ${done}/${COUNT}\r`);
  };
  const exported = await syntheticExport({ count: COUNT, onProgress: progress('the export') });
  const fitOnly = await syntheticHistory({ count: COUNT, days: 3650, onProgress: progress('the FIT-only history') });
  const counts = byFormat(exported.files);
  const hours = exported.files.reduce((s, f) => s + f.seconds, 0) / 3600;
  process.stdout.write(
    `\n${exported.generated ? `generated in ${exported.generateSeconds.toFixed(0)} s` : 'from the cache'} (not measured): ${exported.dir}\n` +
      `${COUNT} rides, ${hours.toFixed(0)} h: FIT ${counts.fit?.length ?? 0}, GPX ${counts.gpx?.length ?? 0}, TCX ${counts.tcx?.length ?? 0}; ` +
      `zip ${(statSync(exported.zip).size / 1024 / 1024).toFixed(0)} MiB\n`,
  );

  const sample = exported.files.slice(0, SAMPLE);
  const sampleBy = byFormat(sample);
  const { lxml, fitDecodeSeconds, engine } = await baselines(sampleBy);
  const tcx = await tcxFigure();

  const oldestOf = <T extends { start: string }>(files: T[]): T => files.reduce((a, b) => (a.start < b.start ? a : b));
  const oldest = oldestOf(exported.files);
  const mixed = await runChild({
    BENCH_ZIP: exported.zip,
    BENCH_EXPECTED: String(COUNT),
    BENCH_OLDEST_LOCAL: naiveLocal(oldest.start, oldest.utcOffsetSeconds),
  });
  const fit = await runChild({
    BENCH_ZIP: fitOnly.zip,
    BENCH_EXPECTED: String(COUNT),
    BENCH_OLDEST_LOCAL: naiveLocal(oldestOf(fitOnly.files).start, 3600),
  });

  const n = (files: unknown[] | undefined) => files?.length ?? 0;
  const userSeconds = 'error' in lxml ? Number.NaN : lxml.seconds + fitDecodeSeconds;
  const rows: [string, number, number][] = [
    [`user instead: lxml (GPX, TCX) + fit-file-parser (FIT), sequential, ${sample.length} files`, userSeconds, sample.length],
    ...(['fit', 'gpx', 'tcx'] as const).map(
      (f) =>
        [`engine ingest task, sequential in-process: ${n(sampleBy[f])} ${f.toUpperCase()}`, engine[f], n(sampleBy[f])] as [
          string,
          number,
          number,
        ],
    ),
    [`backfill, FIT-only history (${fit.concurrency} workers, ${fit.engine_threads} engine threads)`, fit.seconds.total, COUNT],
    [`backfill, the export (${mixed.concurrency} workers, ${mixed.engine_threads} engine threads)`, mixed.seconds.total, COUNT],
  ];
  process.stdout.write(`\n${os.cpus().length} cores, Node ${process.version}\n\n`);
  process.stdout.write(
    formatTable(
      ['workload', 'files', 'seconds', 'files/s'],
      rows.map(([w, s, k]) => [w, String(k), s.toFixed(2), (k / s).toFixed(1)]),
    ),
  );
  const rate = COUNT / mixed.seconds.total;
  const rss = mixed.memory_mb.worker_peak_rss;
  const met = { rate: rate >= TARGET_FILES_PER_S, tcx: tcx.parse_median_ms <= TARGET_TCX_MS, rss: rss <= TARGET_RSS_MB };
  const c = mixed.checks;
  process.stdout.write(
    [
      '',
      'error' in lxml
        ? `lxml baseline unavailable (${lxml.error}); pip install lxml numpy`
        : `lxml: ${lxml.points} trackpoints, GPX ${lxml.by_format.gpx!.toFixed(2)} s, TCX ${lxml.by_format.tcx!.toFixed(2)} s`,
      `3.5 MB TCX (${tcx.mb.toFixed(2)} MiB): parse median ${tcx.parse_median_ms.toFixed(0)} ms (fastest ${tcx.parse_fastest_ms.toFixed(0)}); ` +
        `whole ingest (parse + resample + summary + curves) median ${tcx.median_ms.toFixed(0)} ms (fastest ${tcx.fastest_ms.toFixed(0)}); 15 runs after one warm-up`,
      `worker peak RSS: export ${rss.toFixed(0)} MB, FIT-only ${fit.memory_mb.worker_peak_rss.toFixed(0)} MB`,
      `checks: activities ${c.activities}/${c.expected}, failed sources ${c.failed_sources}${c.failed_sources ? ` (${JSON.stringify(c.failed_examples)})` : ''}; ` +
        `status stream ends ${c.status_loaded_until} (oldest ${c.expected_loaded_until})`,
      `targets: ≥ ${TARGET_FILES_PER_S} files/s ${met.rate ? 'met' : 'MISSED'} (${rate.toFixed(1)}); 3.5 MB TCX ≤ ${TARGET_TCX_MS} ms ${met.tcx ? 'met' : 'MISSED'} ` +
        `(parse ${tcx.parse_median_ms.toFixed(0)}); worker RSS ≤ ${TARGET_RSS_MB} MB ${met.rss ? 'met' : 'MISSED'} (${rss.toFixed(0)})`,
      '',
    ].join('\n'),
  );
  recordTarget({
    benchmark: 'tracks',
    target: `${COUNT}-ride export: ≥ ${TARGET_FILES_PER_S} files/s, 3.5 MB TCX ≤ ${TARGET_TCX_MS} ms, worker RSS ≤ ${TARGET_RSS_MB} MB`,
    figure: `${rate.toFixed(1)} files/s, ${tcx.parse_median_ms.toFixed(0)} ms, ${rss.toFixed(0)} MB`,
    met: met.rate && met.tcx && met.rss,
  });
  const report = {
    benchmark: 'tracks',
    at: new Date().toISOString(),
    node: process.version,
    cores: os.cpus().length,
    files: COUNT,
    rows: rows.map(([workload, seconds, files]) => ({
      workload,
      files,
      seconds: round2(seconds),
      files_per_second: round2(files / seconds),
    })),
    tcx,
    lxml,
    export: mixed,
    fit_only: fit,
    met,
  };
  process.stdout.write(`wrote ${writeReport('tracks', report)} and bench/results/latest.json\n`);
  return report;
}
