import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Helpers shared by the benchmarks of `npm run bench`: tables, quantiles and the result files. */
export const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** A text table: the first column left-aligned, the others right-aligned. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return line(header) + '\n' + line(widths.map((w) => '-'.repeat(w))) + '\n' + rows.map(line).join('\n') + '\n';
}

/** Nearest-rank quantile of ascending values. */
export function quantile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export interface Distribution {
  n: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  mean_ms: number;
}

export const round2 = (x: number) => Math.round(x * 100) / 100;

export function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50_ms: round2(quantile(sorted, 0.5)),
    p95_ms: round2(quantile(sorted, 0.95)),
    max_ms: round2(sorted.at(-1) ?? Number.NaN),
    mean_ms: round2(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
}

/**
 * Write `bench/results/<name>-<time>.json`, and the report under its name in
 * `bench/results/latest.json` (one entry per benchmark, so running one keeps the others' latest
 * figures; a latest.json from before, holding one report, is kept under its `benchmark`).
 * `latest: false`: the file alone (a comparison's figures are of two trees, not this one's latest).
 */
export function writeReport(name: string, report: { at: string } & Record<string, unknown>, opts: { latest?: boolean } = {}): string {
  const dir = path.join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}-${report.at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  if (opts.latest === false) return path.relative(ROOT, file);
  const latestFile = path.join(dir, 'latest.json');
  let latest: Record<string, unknown> = {};
  if (existsSync(latestFile)) {
    try {
      const previous = JSON.parse(readFileSync(latestFile, 'utf8')) as Record<string, unknown>;
      latest = typeof previous.benchmark === 'string' ? { [previous.benchmark]: previous } : previous;
    } catch {
      latest = {};
    }
  }
  latest[name] = report;
  writeFileSync(latestFile, JSON.stringify(latest, null, 2) + '\n');
  return path.relative(ROOT, file);
}

/**
 * A benchmark's closing: a line naming what ran (`context`) and the machine (cores, Node, load
 * averages), its table, its notes, then its report written (writeReport) with the same machine facts
 * and `fields`.
 */
export function printAndWriteReport(
  name: string,
  run: { context?: string; header: string[]; table: string[][]; notes?: string[]; fields: Record<string, unknown> },
): void {
  const load = os.loadavg();
  const machine = `${os.cpus().length} cores, Node ${process.version}, load ${load.map((l) => l.toFixed(2)).join(' ')}`;
  process.stdout.write(`\n${run.context ? `${run.context}, ` : ''}${machine}\n\n`);
  process.stdout.write(formatTable(run.header, run.table));
  for (const note of run.notes ?? []) process.stdout.write(`note: ${note}\n`);
  const report = { benchmark: name, at: new Date().toISOString(), node: process.version, cores: os.cpus().length, load, ...run.fields };
  process.stdout.write(`\nwrote ${writeReport(name, report)} and bench/results/latest.json\n`);
}

/** The report a benchmark wrote last (its entry in bench/results/latest.json), or undefined. */
export function latestReport(name: string): unknown {
  try {
    return (JSON.parse(readFileSync(path.join(ROOT, 'bench', 'results', 'latest.json'), 'utf8')) as Record<string, unknown>)[name];
  } catch {
    return undefined;
  }
}

/** The schema's name and version of the documents `--json` prints (bench/README.md, "JSON"). */
export const JSON_SCHEMA = 'tds-bench/1';

/** The one JSON document of `npm run bench -- … --json`: the envelope, and the command's own body. */
export function jsonDocument(command: string, body: Record<string, unknown>): Record<string, unknown> {
  return {
    schema: JSON_SCHEMA,
    command,
    at: new Date().toISOString(),
    machine: { cores: os.cpus().length, node: process.version, load: os.loadavg().map((l) => Math.round(l * 100) / 100) },
    ...body,
  };
}

/** A performance target and what this run measured for it (printed together at the end of `npm run bench`). */
export interface TargetResult {
  benchmark: string;
  target: string;
  figure: string;
  met: boolean;
}

const targets: TargetResult[] = [];

/** Record a target's outcome; each benchmark also prints it in its own table. */
export function recordTarget(result: TargetResult): void {
  targets.push(result);
}

export function recordedTargets(): readonly TargetResult[] {
  return targets;
}
