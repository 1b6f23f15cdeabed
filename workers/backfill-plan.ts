/**
 * What a history's scan (./backfill.ts) does with each entry: when the history is a Strava bulk
 * export (lib/strava-export.ts: an `activities.csv` with Strava's columns at its root, or in its one
 * folder), the CSV is the export's record and no activity file, each file its rows name gets that
 * row's name, description, sport and gear tag, other files under `activities/` are read without,
 * and the export's other files (profile.csv, media, …) are skipped as `export_other`. Any other
 * history: every activity file is read, none with metadata.
 */
import type { History, HistoryEntry } from '../lib/archive-nested.ts';
import { ArchiveError } from '../lib/archive.ts';
import { findActivitiesCsv, readStravaExport, type StravaActivity, type StravaCounts } from '../lib/strava-export.ts';
import type { Logger } from '../lib/log.ts';

export type EntryPlan = { skip: 'export_csv' | 'export_other' } | { metadata: StravaActivity | null };

export interface HistoryPlan {
  plan(entry: HistoryEntry): EntryPlan;
  /** Null unless the history is a Strava export; final once every entry has been planned. */
  strava: StravaCounts | null;
}

const NONE: EntryPlan = { metadata: null };

export async function planHistory(reader: Pick<History, 'entries' | 'read'>, log: Logger): Promise<HistoryPlan> {
  const top = reader.entries.filter((e) => e.container === '');
  const csvName = findActivitiesCsv(top.map((e) => e.name));
  const csv = csvName === null ? undefined : top.find((e) => e.name === csvName);
  if (!csv) return { plan: () => NONE, strava: null };
  let parsed: ReturnType<typeof readStravaExport>;
  try {
    parsed = readStravaExport(await reader.read(csv));
  } catch (err) {
    if (!(err instanceof ArchiveError)) throw err;
    log.warn('activities.csv could not be read', { entry: csv.name, code: err.code });
    parsed = null;
  }
  if (!parsed) return { plan: () => NONE, strava: null };
  const root = csvName!.slice(0, -'activities.csv'.length);
  const counts: StravaCounts = {
    rows: parsed.rows,
    with_file: 0,
    without_file: parsed.withoutFile,
    file_missing: parsed.byFile.size + parsed.unsafeNames,
  };
  const matched = new Set<string>();
  return {
    strava: counts,
    plan(entry) {
      if (entry === csv) return { skip: 'export_csv' };
      if (entry.container !== '' || !entry.name.startsWith(root)) return NONE;
      const rel = entry.name.slice(root.length);
      const metadata = parsed.byFile.get(rel);
      if (metadata) {
        if (!matched.has(rel)) {
          matched.add(rel);
          counts.with_file++;
          counts.file_missing--;
        }
        return { metadata };
      }
      return rel.startsWith('activities/') ? NONE : { skip: 'export_other' };
    },
  };
}
