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
import { parseGpx } from './gpx.ts';
import { parseTcx } from './tcx.ts';
import { computeCurves } from '../curves/activity-curves.ts';
import { afterGridEntry } from '../curves/after-grid.ts';
import type { IngestedActivity, IngestInput, IngestResult } from './ingested.ts';
import { dropImplausible } from './plausible.ts';
import { IngestError, type Recording } from './recording.ts';
import { CHANNELS } from '../channels.ts';
import { resample } from './resample.ts';
import { MAX_RECORDS, tooManyRecords } from './limits.ts';
import { lapStats, summarise, timing, type SpanTotals } from './summary.ts';
import { INGEST_RULES_VERSION } from './rules.ts';
import { checkDevice } from './device-checks.ts';
import { oursOf, sessionFacts } from './device-facts.ts';

export async function ingestFile(task: IngestInput): Promise<IngestResult> {
  try {
    const recordings = task.format === 'csv' ? [await parseCsv(task.bytes, task.sport)] : withFormSport(await parse(task), task.sport);
    return { ok: true, activities: recordings.map(toActivity) };
  } catch (error) {
    if (error instanceof IngestError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

/** The Recordings of a FIT, GPX or TCX file. */
async function parse(task: IngestInput): Promise<Recording[]> {
  if (task.format === 'gpx') return parseGpx(task.bytes);
  if (task.format === 'tcx') return parseTcx(task.bytes);
  return parseFit(task.bytes);
}

/**
 * FIT, GPX and TCX files name their sport (or `generic`); the upload's sport field only replaces `generic` (a file, or a
 * session of a multisport file, that does not say). A sport field that is not a sport is refused
 * (`invalid_sport`) whether or not it would be used: the API validates it, this is the backstop.
 */
function withFormSport(recordings: Recording[], field: string | null): Recording[] {
  if (field === null || field.trim() === '') return recordings;
  const sport = normaliseSport(field);
  if (sport === undefined)
    throw new IngestError(
      'invalid_sport',
      `The upload's sport field "${field}" is not a sport (an OpenSportTaxonomy string such as cycling.road).`,
    );
  return recordings.map((rec) => (rec.sport === 'generic' ? { ...rec, sport } : rec));
}

function toActivity(parsed: Recording): IngestedActivity {
  // Before resampling: the grid would hold a spike across a short gap, or hide it behind a later sample.
  if (parsed.timestamps.length > MAX_RECORDS) throw tooManyRecords();
  const { recording: rec, implausible } = dropImplausible(parsed);
  const grid = resample(rec);
  const end = rec.end.getTime();
  const device = rec.deviceSummary;
  const totals: SpanTotals = { ascent: device?.total_ascent, descent: device?.total_descent };
  const { timer_seconds, moving_seconds } = timing(grid, { start: rec.start.getTime(), end }, 0, grid.length);
  const summary = summarise(grid, 0, grid.length, totals, moving_seconds);
  const activity = {
    sport: rec.sport,
    start: grid.start,
    end,
    utcOffsetSeconds: rec.utcOffsetSeconds,
    devices: rec.devices,
    metrics: CHANNELS.filter((c) => grid.channels[c] !== undefined),
    length: grid.length,
    channels: grid.channels,
    summary,
    laps: lapStats(grid, rec.laps, { start: grid.start, end, totals }),
    distance: summary.distance?.sum ?? null,
    curves: computeCurves(grid.channels),
    afterGrid: grid.channels.power ? afterGridEntry(grid.channels.power) : null,
    implausibleSamples: implausible,
    timerSeconds: timer_seconds,
    movingSeconds: moving_seconds,
    deviceSummary: device ?? null,
    droppedRecords: rec.dropped ?? {},
    ingestVersion: INGEST_RULES_VERSION,
  };
  // The data checks read the file's records as the device saw them: before implausible samples were dropped.
  const facts = sessionFacts(parsed);
  return { ...activity, deviceChecks: facts ? checkDevice(facts, oursOf(activity)) : null };
}
