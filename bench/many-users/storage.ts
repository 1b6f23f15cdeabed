import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { AFTER_GRID_CHANNEL } from '../../engine/curves/after-grid.ts';
import { columnsDir } from '../../lib/storage.ts';
import { recordTarget } from '../report.ts';
import type { Row, Run } from './report.ts';
import type { Bench } from './seed.ts';
import { DIR, MB, TARGET } from './settings.ts';

/**
 * The stored curves and the fatigue grid of `npm run bench -- many-users`, per activity, beside the
 * mean sample file: measured before any request writes derived files, reported last.
 */
export interface Storage {
  curves_bytes: number;
  grid_bytes: number;
  activities: number;
  curve_rows: number;
  sample_bytes: number;
  sample_files: number;
}

/** pg_total_relation_size('activity_curves'), the activities and curve rows, the grid's files and the sample files. */
export async function measureStorage(bench: Bench): Promise<Storage> {
  const size = await sql<{
    curves: string;
    activities: string;
    rows: string;
  }>`SELECT pg_total_relation_size('activity_curves') AS curves, (SELECT count(*) FROM activities) AS activities, (SELECT count(*) FROM activity_curves) AS rows`.execute(
    bench.deps.db,
  );
  const files = sampleFiles();
  const s = size.rows[0]!;
  return {
    curves_bytes: Number(s.curves),
    grid_bytes: gridBytes(),
    activities: Number(s.activities),
    curve_rows: Number(s.rows),
    sample_bytes: files.bytes,
    sample_files: files.files,
  };
}

/** The fatigue grid's files (values and logs) of every athlete. */
function gridBytes(): number {
  let bytes = 0;
  const users = path.join(DIR, 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    const dir = columnsDir(DIR, user);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.startsWith(`${AFTER_GRID_CHANNEL}.`)) bytes += statSync(path.join(dir, f)).size;
  }
  return bytes;
}

/** Sum and count of the sample files under DATA_DIR/users/<id>/activities. */
function sampleFiles(): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const users = path.join(DIR, 'users');
  for (const user of existsSync(users) ? readdirSync(users) : []) {
    const dir = path.join(users, user, 'activities');
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.parquet')) continue;
      bytes += statSync(path.join(dir, f)).size;
      files++;
    }
  }
  return { bytes, files };
}

/** 4. Stored curves beside the sample files: a row and a target for the curves, and for the curves and the grid together. */
export function storageRows(run: Run, storage: Storage): void {
  const { rows } = run;
  const perActivity = storage.curves_bytes / Math.max(1, storage.activities);
  const perFile = storage.sample_bytes / Math.max(1, storage.sample_files);
  const share = perActivity / perFile;
  /** A row of bytes kept per activity beside the mean sample file, against the storage target. */
  const storageRow = (workload: string, fraction: number, note: string): Row => ({
    workload,
    athletes: 0,
    rides: storage.activities,
    requests: 0,
    errors: 0,
    p50_ms: Number.NaN,
    target: `≤ ${TARGET.curvesShare * 100} %`,
    met: fraction <= TARGET.curvesShare,
    note,
  });
  rows.push(
    storageRow(
      `stored curves per activity (pg_total_relation_size('activity_curves') / ${storage.activities.toLocaleString('en')} activities) vs mean sample file`,
      share,
      `${(perActivity / 1024).toFixed(1)} KiB vs ${(perFile / 1024).toFixed(1)} KiB: ${(share * 100).toFixed(1)} % (${(storage.curves_bytes / MB).toFixed(0)} MiB of curves, ${storage.curve_rows.toLocaleString('en')} rows; ${(storage.sample_bytes / MB).toFixed(0)} MiB in ${storage.sample_files.toLocaleString('en')} files)`,
    ),
  );
  recordTarget({
    benchmark: 'many-users',
    target: `stored per-activity curves ≤ ${TARGET.curvesShare * 100} % of the sample files' size`,
    figure: `${(perActivity / 1024).toFixed(1)} KiB per activity vs ${(perFile / 1024).toFixed(1)} KiB per sample file: ${(share * 100).toFixed(1)} %`,
    met: share <= TARGET.curvesShare,
  });
  const gridPer = storage.grid_bytes / Math.max(1, storage.activities);
  const both = (perActivity + gridPer) / perFile;
  rows.push(
    storageRow(
      `stored curves and fatigue grid per activity (the grid's column files / ${storage.activities.toLocaleString('en')} activities) vs mean sample file`,
      both,
      `grid ${(gridPer / 1024).toFixed(1)} KiB (${((gridPer / perFile) * 100).toFixed(1)} %) + curves ${(perActivity / 1024).toFixed(1)} KiB: ${(both * 100).toFixed(1)} % (${(storage.grid_bytes / MB).toFixed(0)} MiB of grid files)`,
    ),
  );
  recordTarget({
    benchmark: 'many-users',
    target: `stored per-activity curves and fatigue grid together ≤ ${TARGET.curvesShare * 100} % of the sample files' size`,
    figure: `${((perActivity + gridPer) / 1024).toFixed(1)} KiB per activity vs ${(perFile / 1024).toFixed(1)} KiB: ${(both * 100).toFixed(1)} %`,
    met: both <= TARGET.curvesShare,
  });
}
