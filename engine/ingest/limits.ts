import { IngestError } from './recording.ts';

/**
 * How much one activity may hold (docs/api-clients.md, "Activities": Limits per activity): a file beyond them fails on its
 * own with a clear code instead of holding an ingest slot and gigabytes for minutes.
 *
 * - MAX_ACTIVITY_SECONDS: 8 days on the 1 Hz grid (691,200 samples per channel), so that a
 *   multi-day event (a 5-day ultra, a 7-day stage race recorded as one file) still fits.
 *   Longer: `activity_too_long`.
 * - MAX_RECORDS: 4 records per second of that (2,764,800), for devices that record faster than 1 Hz.
 *   More records: `too_many_samples`, found while decoding (the lean FIT decoder and the CSV reader
 *   stop there) or after parsing (other paths).
 */
export const MAX_ACTIVITY_SECONDS = 8 * 86_400;
export const MAX_RECORDS = 4 * MAX_ACTIVITY_SECONDS;

export function tooManyRecords(limit = MAX_RECORDS): IngestError {
  return new IngestError(
    'too_many_samples',
    `The file holds more than ${limit.toLocaleString('en-US')} samples in one activity (at most ${limit.toLocaleString('en-US')}).`,
  );
}

export function tooLong(seconds: number, limit = MAX_ACTIVITY_SECONDS): IngestError {
  return new IngestError(
    'activity_too_long',
    `The activity spans ${Math.round(seconds / 3600)} h; at most ${limit / 86_400} days (${limit.toLocaleString('en-US')} s) fit in one activity.`,
  );
}
