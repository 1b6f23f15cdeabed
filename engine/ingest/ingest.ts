/**
 * The ingest task (run in the piscina pool): one uploaded file → the activities it holds, each with
 * its implausible samples dropped and counted (engine/ingest/plausible.ts), then on a regular 1 Hz
 * grid with its summary, laps and curves (engine/ingest/ingested.ts). A file that cannot become an
 * activity is a result, `{ ok: false, code, message }`, not an exception; anything else thrown is
 * a bug and propagates.
 */
import { normaliseSport } from '../../lib/sports.ts';
import { parseCsv } from './csv.ts';
import { parseFit } from './fit.ts';
import { computeCurves } from '../curves/activity-curves.ts';
import type { IngestedActivity, IngestResult, IngestTask } from './ingested.ts';
import { dropImplausible } from './plausible.ts';
import { CHANNELS, IngestError, type Recording } from './recording.ts';
import { resample } from './resample.ts';
import { MAX_RECORDS, tooManyRecords } from './limits.ts';
import { lapStats, summarise } from './summary.ts';

export async function ingestFile(task: IngestTask): Promise<IngestResult> {
  try {
    const recordings = task.format === 'fit' ? withFormSport(await parseFit(task.bytes), task.sport) : [await parseCsv(task.bytes, task.sport)];
    return { ok: true, activities: recordings.map(toActivity) };
  } catch (error) {
    if (error instanceof IngestError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

/**
 * FIT files name their sport; the upload's sport field only replaces `generic` (a file, or a
 * session of a multisport file, that does not say). A sport field that is not a sport is refused
 * (`invalid_sport`) whether or not it would be used: the API validates it, this is the backstop.
 */
function withFormSport(recordings: Recording[], field: string | null): Recording[] {
  if (field === null || field.trim() === '') return recordings;
  const sport = normaliseSport(field);
  if (sport === undefined) throw new IngestError('invalid_sport', `The upload's sport field "${field}" is not a sport (an OpenSportTaxonomy string such as cycling.road).`);
  return recordings.map((rec) => (rec.sport === 'generic' ? { ...rec, sport } : rec));
}

function toActivity(parsed: Recording): IngestedActivity {
  // Before resampling: the grid would hold a spike across a short gap, or hide it behind a later sample.
  if (parsed.timestamps.length > MAX_RECORDS) throw tooManyRecords();
  const { recording: rec, implausible } = dropImplausible(parsed);
  const grid = resample(rec);
  const end = rec.end.getTime();
  const summary = summarise(grid.channels, 0, grid.length);
  return {
    sport: rec.sport,
    start: grid.start,
    end,
    utcOffsetSeconds: rec.utcOffsetSeconds,
    devices: rec.devices,
    metrics: CHANNELS.filter((c) => grid.channels[c] !== undefined),
    length: grid.length,
    channels: grid.channels,
    summary,
    laps: lapStats(grid, rec.laps, { start: grid.start, end }),
    distance: summary.distance?.sum ?? null,
    curves: computeCurves(grid.channels),
    implausibleSamples: implausible,
  };
}
