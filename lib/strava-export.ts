/**
 * Strava's bulk export ("Download or delete your account" → "Request your archive"): `activities.csv`
 * at its root (one row per activity; its header repeats some column names, e.g. `Distance`, `Elapsed
 * Time`: the first occurrence of a name is read) and an `activities/` folder of the original files
 * (`.fit.gz`, `.gpx`, `.gpx.gz`, `.tcx.gz`, `.fit`). Each row's `Filename` (`activities/1234.fit.gz`,
 * relative to the CSV's folder) names its file; a row with an empty `Filename` is an activity entered
 * by hand (no file: counted, not an error).
 *
 * From a row, the activity gets (docs/api-clients.md, "History import"):
 *   - `Activity Name` → name (control characters become spaces, invalid Unicode is replaced, at most
 *     NAME_MAX characters);
 *   - `Activity Description` → description (control characters but line breaks and tabs removed, at
 *     most DESCRIPTION_MAX characters);
 *   - `Activity Type` → sport, by STRAVA_SPORTS: the athlete's choice on Strava wins over the device's
 *     (a FIT file says what the watch was set to; Strava's type is what the athlete corrected it to);
 *     a type not in the table leaves the file's own sport;
 *   - `Activity Gear` → the tag `gear:<name>` (the name with characters a tag may not hold turned into
 *     spaces, at most 64 characters in all), so that activities can be filtered by gear.
 */
import { parse } from 'csv-parse/sync';
import { unsafeName } from './archive-names.ts';

export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 10_000;

/**
 * Strava activity types (as the export writes them, `Virtual Ride`, or as the API does, `VirtualRide`:
 * compared without case, spaces or punctuation) → OpenSportTaxonomy.
 */
export const STRAVA_SPORTS: Readonly<Record<string, string>> = Object.freeze({
  Ride: 'cycling.road',
  VirtualRide: 'cycling+stationary+virtual',
  EBikeRide: 'cycling+electric',
  EMountainBikeRide: 'cycling.mountain+electric',
  MountainBikeRide: 'cycling.mountain',
  GravelRide: 'cycling.gravel',
  Handcycle: 'cycling+hand',
  Velomobile: 'cycling+recumbent',
  Run: 'running.road',
  TrailRun: 'running.trail',
  VirtualRun: 'running+stationary+virtual',
  Swim: 'swimming',
  Walk: 'walking',
  Hike: 'hiking',
  Rowing: 'rowing',
  VirtualRow: 'rowing+stationary+virtual',
  NordicSki: 'xc_skiing',
  BackcountrySki: 'xc_skiing.backcountry',
  RollerSki: 'xc_skiing+roller',
  AlpineSki: 'alpine_skiing',
  Snowboard: 'snowboarding',
  Snowshoe: 'snowshoeing',
  IceSkate: 'ice_skating',
  InlineSkate: 'inline_skating',
  Kayaking: 'paddling.kayaking',
  Canoeing: 'paddling.canoeing',
  StandUpPaddling: 'paddling.stand_up',
  Surfing: 'surfing',
  Kitesurf: 'kitesurfing',
  Windsurf: 'windsurfing',
  Sail: 'sailing',
  Elliptical: 'fitness_equipment.elliptical',
  StairStepper: 'fitness_equipment.stair_climbing',
  WeightTraining: 'training.strength',
  Crossfit: 'training.crossfit',
  Yoga: 'training.yoga',
  Pilates: 'training.pilates',
  Workout: 'generic',
  RockClimbing: 'rock_climbing',
  Golf: 'golf',
  Soccer: 'soccer',
  Tennis: 'tennis',
  Wheelchair: 'wheelchair',
});

const key = (type: string) => type.toLowerCase().replace(/[^a-z]/g, '');
const BY_KEY = new Map(Object.entries(STRAVA_SPORTS).map(([type, sport]) => [key(type), sport]));

/** The sport of a Strava activity type, or null for a type not in STRAVA_SPORTS. */
export function stravaSport(type: string | undefined): string | null {
  return type ? (BY_KEY.get(key(type)) ?? null) : null;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as it can be stored and shown: well-formed Unicode, no NUL or other control characters
 * (single-line text: they become spaces; multi-line: removed, line breaks and tabs kept, CRLF as LF),
 * trimmed, at most `max` characters (code points); null when nothing is left.
 */
export function cleanText(value: string | undefined, max: number, multiline = false): string | null {
  if (!value) return null;
  let text = value.replace(LONE_SURROGATE, '\uFFFD');
  text = multiline
    ? text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '')
    : text.replace(/[\u0000-\u001f\u007f]/g, ' ');
  text = text.trim();
  if (!text) return null;
  // Cut by code points (PostgreSQL's char_length), without reading more than needed.
  let out = '';
  let count = 0;
  for (const ch of text) {
    if (count++ === max) break;
    out += ch;
  }
  return out.trimEnd() || null;
}

const TAG_MAX = 64;

/** The tag of a piece of gear (`gear:Canyon Aeroad 2019`), or null for none. */
export function gearTag(gear: string | undefined): string | null {
  const name = cleanText(gear, 4 * TAG_MAX)
    ?.replace(/[^\p{L}\p{N} _.:/-]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!name) return null;
  return `gear:${[...name].slice(0, TAG_MAX - 5).join('')}`.trimEnd();
}

/** What a row of activities.csv gives its activity. */
export interface StravaActivity {
  name: string | null;
  description: string | null;
  sport: string | null;
  tags: string[];
}

export interface StravaExport {
  /** By `Filename` as written (relative to the CSV's folder). */
  byFile: Map<string, StravaActivity>;
  rows: number;
  /** Rows with no file (activities entered by hand). */
  withoutFile: number;
  /** Rows whose `Filename` is not a safe relative name (`../../etc/passwd`): never looked for. */
  unsafeNames: number;
}

/** What a Strava export's activities.csv held and how much of it matched a file. */
export interface StravaCounts {
  /** Rows of activities.csv. */
  rows: number;
  /** Rows whose file is in the export. */
  with_file: number;
  /** Rows with no file: activities entered by hand. */
  without_file: number;
  /** Rows naming a file the export does not hold (or an unsafe name, such as `../x`, never looked for). */
  file_missing: number;
}

/** Where the export's activities.csv is: at the root, or in one folder (an export unzipped and zipped again). */
export function findActivitiesCsv(names: Iterable<string>): string | null {
  let found: string | null = null;
  for (const name of names) {
    if (name === 'activities.csv') return name;
    if (found === null && /^[^/]+\/activities\.csv$/.test(name)) found = name;
  }
  return found;
}

/**
 * Read a Strava export's activities.csv; null when it is not one (no `Filename` and `Activity ID`
 * columns) or cannot be parsed as CSV.
 */
export function readStravaExport(bytes: Buffer): StravaExport | null {
  let records: string[][];
  try {
    records = parse(bytes, { bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true }) as string[][];
  } catch {
    return null;
  }
  const header = records[0];
  if (!header) return null;
  const column = new Map<string, number>();
  header.forEach((name, i) => {
    const k = name.trim();
    if (!column.has(k)) column.set(k, i); // the first of repeated names
  });
  const at = (row: string[], name: string) => {
    const i = column.get(name);
    return i === undefined ? undefined : row[i];
  };
  if (!column.has('Filename') || !column.has('Activity ID')) return null;
  const out: StravaExport = { byFile: new Map(), rows: 0, withoutFile: 0, unsafeNames: 0 };
  for (const row of records.slice(1)) {
    out.rows++;
    const file = at(row, 'Filename')?.trim() ?? '';
    if (!file) {
      out.withoutFile++;
      continue;
    }
    if (unsafeName(file) !== null) {
      out.unsafeNames++;
      continue;
    }
    const gear = gearTag(at(row, 'Activity Gear'));
    out.byFile.set(file, {
      name: cleanText(at(row, 'Activity Name'), NAME_MAX),
      description: cleanText(at(row, 'Activity Description'), DESCRIPTION_MAX, true),
      sport: stravaSport(at(row, 'Activity Type')),
      tags: gear ? [gear] : [],
    });
  }
  return out;
}
