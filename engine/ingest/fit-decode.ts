/**
 * fit-file-parser's decode of a FIT file, as engine/ingest/fit.ts calls it (its module comment says
 * why this library): `force: false` makes it verify the header and file CRCs and reject a truncated
 * or corrupt file instead of returning what it could read. Its unit options give m/s, m and °C;
 * latitude/longitude come out in degrees (it converts semicircles). Its failures become IngestError
 * `invalid_fit`.
 */
import FitParser, { type ParsedFit } from 'fit-file-parser';
import { IngestError } from './recording.ts';

const PARSER_OPTIONS = {
  speedUnit: 'm/s',
  lengthUnit: 'm',
  temperatureUnit: 'celsius',
  elapsedRecordField: true,
  mode: 'list',
} as const;

/**
 * fit-file-parser's decode, its failures turned into `invalid_fit`. With `force: false` it reports
 * header, size and CRC failures through its callback before decoding any message, and throws on a
 * message it cannot decode strictly. A thrown failure therefore comes from a file whose CRC is
 * good; among them is a quirk any producer can write (a developer field whose base type lacks the
 * endian bit, as Garmin's own JS SDK constants give it), so such a file is decoded once
 * more leniently (`force: true`: undecodable developer fields are skipped) before being refused.
 */
export function decode(bytes: Uint8Array): ParsedFit {
  // A private copy: the parser gets an ArrayBuffer of exactly these bytes, whatever `bytes` views.
  const buffer = new Uint8Array(bytes).buffer;
  const strict = attempt(buffer, false);
  if ('fit' in strict) return strict.fit;
  if (strict.thrown) {
    const lenient = attempt(buffer, true);
    if ('fit' in lenient) return lenient.fit;
  }
  throw new IngestError('invalid_fit', describeFailure(strict.failure, bytes.byteLength));
}

export function attempt(buffer: ArrayBuffer, force: boolean): { fit: ParsedFit } | { failure: unknown; thrown: boolean } {
  let result: ParsedFit | undefined;
  let reported: unknown;
  try {
    new FitParser({ ...PARSER_OPTIONS, force }).parse(buffer, (error, data) => {
      reported = error;
      result = data;
    });
  } catch (error) {
    return { failure: error ?? 'decoding failed', thrown: true };
  }
  if (reported !== undefined || result === undefined) return { failure: reported ?? 'decoding failed', thrown: false };
  return { fit: result };
}

function describeFailure(failure: unknown, size: number): string {
  const reason = failure instanceof Error ? failure.message : String(failure ?? 'decoding failed');
  const known: Record<string, string> = {
    'File to small to be a FIT file': `is too small to be a FIT file (${size} bytes)`,
    'Incorrect header size': 'does not start with a FIT file header',
    "Missing '.FIT' in header": "lacks the '.FIT' signature in its header",
    'Header CRC mismatch': 'has a corrupt header (header CRC mismatch)',
    'File data exceeds input length': 'is truncated (its header announces more data than the file contains)',
    'File CRC missing': 'is truncated (the final CRC is missing)',
    'File CRC mismatch': 'is corrupt (file CRC mismatch)',
  };
  return `The file is not a valid FIT file: it ${known[reason] ?? `could not be decoded (${reason})`}.`;
}
