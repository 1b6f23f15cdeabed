import FitParser from 'fit-file-parser';

/**
 * The plain parse cost of a FIT file: fit-file-parser's decode, as engine/ingest/fit.ts calls it
 * (strict: header and CRC checked), and nothing else. The baseline of the ingest and backfill
 * benchmarks, and a control row of `npm run bench -- compare` (library code, the same on both sides).
 * Its own module so that those rows load no product code with it.
 */
const PARSER_OPTIONS = {
  speedUnit: 'm/s',
  lengthUnit: 'm',
  temperatureUnit: 'celsius',
  elapsedRecordField: true,
  mode: 'list',
  force: false,
} as const;

/** Decode `bytes`; the number of records read. */
export function fitFileParserDecode(bytes: Uint8Array): number {
  let records = -1;
  let failure: unknown;
  new FitParser(PARSER_OPTIONS).parse(new Uint8Array(bytes).buffer, (error, data) => {
    failure = error;
    records = data?.records?.length ?? -1;
  });
  if (failure) throw new Error(`fit-file-parser: ${String(failure)}`);
  return records;
}
