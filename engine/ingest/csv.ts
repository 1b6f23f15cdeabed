/**
 * CSV activity files → a Recording (engine/ingest/recording.ts). docs/api-clients.md, "Activities": a `timestamp` column (ISO
 * 8601 with a UTC offset), metric columns named as Metric values, `sport` from the upload's form
 * field or a `sport` column; here also an optional `lap` column.
 *
 * Parsed by csv-parse's streaming Transform (header row → column names, BOM stripped, cells
 * trimmed, empty lines skipped), fed 64 KiB at a time. Every refusal is an IngestError with its
 * own code and a message naming the line (1-based file line, the header being line 1; for a row
 * whose quoted cell spans lines, the line it ends on) and, for a cell, its column:
 *
 *   empty_file               no bytes, or nothing but blank lines (no header row)
 *   csv_malformed            csv-parse refused the text (bad quoting, a row with more or fewer cells)
 *   csv_missing_timestamp    the header has no `timestamp` column
 *   csv_duplicate_column     two header cells name the same timestamp/sport/lap/metric column
 *   csv_no_data              a header but no data row
 *   csv_naive_timestamp      an ISO 8601 timestamp without `Z` or an offset
 *   csv_invalid_timestamp    not an ISO 8601 date-time (or an impossible date, or an offset beyond ±14:00)
 *   csv_unordered_timestamps a timestamp not strictly after the previous row's
 *   csv_bad_number           a metric cell that is not a finite decimal number
 *   csv_missing_sport        no form field and no `sport` value in the file
 *   csv_invalid_sport        the sport given is not an OpenSportTaxonomy string
 */
import { Readable } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { normaliseSport } from '../../lib/sports.ts';
import { parseInstant } from '../../lib/time.ts';
import { IngestError, type Lap, type Recording } from './recording.ts';
import { CHANNELS, type Channel } from '../channels.ts';
import { MAX_RECORDS, tooManyRecords } from './limits.ts';

/** Columns read besides the metric channels; every other column is ignored. */
const SPECIAL = ['timestamp', 'sport', 'lap'] as const;
type Column = Channel | (typeof SPECIAL)[number];
const KNOWN = new Set<string>([...SPECIAL, ...CHANNELS]);

const CHUNK = 64 * 1024;

export async function parseCsv(bytes: Uint8Array, sport: string | null): Promise<Recording> {
  if (bytes.byteLength === 0) throw new IngestError('empty_file', 'The file is empty (0 bytes).');
  const formSport = sport !== null && sport.trim() !== '' ? checkSport(sport, "the upload's sport field") : undefined;

  const header = new Header();
  const rows = new Rows();
  const source = Readable.from(chunks(bytes));
  const parser = source.pipe(
    parse({ columns: (cells: string[]) => header.read(cells), bom: true, trim: true, skip_empty_lines: true, info: true }),
  );
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Partial<Record<Column, string>>; info: { lines: number } }>) {
      if (rows.count === 0) header.check();
      rows.add(record, info.lines, header, formSport === undefined);
    }
  } catch (error) {
    throw error instanceof IngestError ? error : malformed(error);
  } finally {
    source.destroy();
  }

  if (!header.seen) throw new IngestError('empty_file', 'The file has no header row: it holds only blank lines.');
  header.check();
  if (rows.count === 0) throw new IngestError('csv_no_data', 'The CSV file has a header row but no data rows.');
  const resolved = formSport ?? rows.sport;
  if (resolved === undefined)
    throw new IngestError('csv_missing_sport', "The CSV file names no sport: give the upload's sport field or a sport column.");
  return rows.recording(resolved);
}

/** The bytes as a stream of Buffer views (no copy), so that csv-parse works chunk by chunk. */
function* chunks(bytes: Uint8Array): Generator<Buffer> {
  for (let at = 0; at < bytes.byteLength; at += CHUNK) {
    yield Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(CHUNK, bytes.byteLength - at));
  }
}

/** A csv-parse refusal (a CsvError carries the line it stopped on) as csv_malformed; anything else is a bug. */
function malformed(error: unknown): unknown {
  if (!(error instanceof CsvError)) return error;
  const line = error['lines'];
  return new IngestError('csv_malformed', `${typeof line === 'number' ? `line ${line}: ` : ''}the CSV is malformed (${error.message}).`);
}

// ─── Header ──────────────────────────────────────────────────────────────────────────────────────

/**
 * The header row: each cell equal (case-insensitive; cells are already trimmed) to `timestamp`,
 * `sport`, `lap` or a channel name becomes that column; every other column is ignored (`false`
 * tells csv-parse to drop it). Problems are kept and raised by `check()` (outside csv-parse).
 */
class Header {
  seen = false;
  /** The header text of each column read, for messages. */
  readonly names = new Map<Column, string>();
  private problem: IngestError | undefined;

  read(cells: string[]): (Column | false)[] {
    this.seen = true;
    return cells.map((cell) => {
      const key = cell.toLowerCase();
      if (!KNOWN.has(key)) return false;
      const column = key as Column;
      if (this.names.has(column)) {
        this.problem ??= new IngestError(
          'csv_duplicate_column',
          `line 1: the header names the ${column} column twice ("${this.names.get(column)}" and "${cell}").`,
        );
        return false;
      }
      this.names.set(column, cell);
      return column;
    });
  }

  check(): void {
    if (this.problem) throw this.problem;
    if (!this.names.has('timestamp'))
      throw new IngestError(
        'csv_missing_timestamp',
        'line 1: the header has no timestamp column (an ISO 8601 instant with a UTC offset per row).',
      );
  }

  get channels(): Channel[] {
    return CHANNELS.filter((c) => this.names.has(c));
  }
}

// ─── Rows ────────────────────────────────────────────────────────────────────────────────────────

/** The rows read so far, column by column. */
class Rows {
  count = 0;
  /** The first non-empty `sport` cell, normalised. */
  sport: string | undefined;
  private readonly timestamps: number[] = [];
  private readonly values = new Map<Channel, number[]>();
  private utcOffsetSeconds = 0;
  private previous = { t: -Infinity, text: '', line: 0 };
  /** Lap starts (epoch ms) where the `lap` cell changes; `lap` is the current lap's label. */
  private readonly lapStarts: number[] = [];
  private lap: string | undefined;

  add(record: Partial<Record<Column, string>>, line: number, header: Header, wantSport: boolean): void {
    const text = record.timestamp ?? '';
    const { t, offsetSeconds } = parseTimestamp(text, line);
    if (t <= this.previous.t) {
      throw new IngestError(
        'csv_unordered_timestamps',
        `line ${line}: timestamp "${text}" is not after the previous row's "${this.previous.text}" (line ${this.previous.line}); timestamps must strictly increase.`,
      );
    }
    if (this.count === 0) this.utcOffsetSeconds = offsetSeconds;
    this.previous = { t, text, line };
    this.timestamps.push(t);

    for (const channel of header.channels) {
      let column = this.values.get(channel);
      if (!column) this.values.set(channel, (column = []));
      column.push(parseNumber(record[channel] ?? '', line, header.names.get(channel)!));
    }

    const sport = record.sport ?? '';
    if (wantSport && this.sport === undefined && sport !== '')
      this.sport = checkSport(sport, `line ${line}, column ${header.names.get('sport')}`);

    // A lap starts where the lap cell changes; an empty cell continues the current lap, and the
    // rows before the first label belong to the first lap.
    const lap = record.lap ?? '';
    if (lap !== '' && lap !== this.lap) {
      if (this.lap !== undefined) this.lapStarts.push(t);
      this.lap = lap;
    }
    this.count++;
    if (this.count > MAX_RECORDS) throw tooManyRecords();
  }

  /** start = the first timestamp, end = the last + 1 s (the last row stands for its second). */
  recording(sport: string): Recording {
    const timestamps = Float64Array.from(this.timestamps);
    const start = timestamps[0]!;
    const end = timestamps[timestamps.length - 1]! + 1000;
    const channels: Recording['channels'] = {};
    for (const [channel, values] of this.values) {
      if (values.some((v) => !Number.isNaN(v))) channels[channel] = Float64Array.from(values);
    }
    const starts = this.lap === undefined ? [] : [start, ...this.lapStarts];
    const laps: Lap[] = starts.map((s, k) => ({ start: new Date(s), end: new Date(starts[k + 1] ?? end) }));
    return {
      sport,
      start: new Date(start),
      end: new Date(end),
      utcOffsetSeconds: this.utcOffsetSeconds,
      devices: [],
      laps,
      timestamps,
      channels,
    };
  }
}

// ─── Cells ───────────────────────────────────────────────────────────────────────────────────────

function parseTimestamp(text: string, line: number): { t: number; offsetSeconds: number } {
  if (text === '') throw new IngestError('csv_invalid_timestamp', `line ${line}: the timestamp is empty.`);
  const parsed = parseInstant(text);
  if (parsed.ok) return parsed;
  throw new IngestError(parsed.naive ? 'csv_naive_timestamp' : 'csv_invalid_timestamp', `line ${line}: timestamp "${text}" ${parsed.why}.`);
}

/** A decimal number (optional sign, fraction and exponent); hex, `NaN`, `Infinity` and decimal commas are not. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** An empty cell is a missing value (NaN); anything else must be a finite decimal number. */
function parseNumber(cell: string, line: number, column: string): number {
  if (cell === '') return Number.NaN;
  const v = DECIMAL.test(cell) ? Number(cell) : Number.NaN;
  if (!Number.isFinite(v)) {
    throw new IngestError(
      'csv_bad_number',
      `line ${line}, column ${column}: "${cell}" is not ${Number.isNaN(v) ? 'a number' : 'a finite number'}.`,
    );
  }
  return v;
}

/** The canonical sport, or csv_invalid_sport naming where the value came from. */
function checkSport(value: string, where: string): string {
  const sport = normaliseSport(value);
  if (sport === undefined) {
    throw new IngestError(
      'csv_invalid_sport',
      `${where}: "${value}" is not a sport (an OpenSportTaxonomy string such as cycling.road or running+stationary).`,
    );
  }
  return sport;
}
