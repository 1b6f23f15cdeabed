/**
 * The wire formats of time (API.md Conventions): instants in UTC with `Z`, local wall-clock times
 * without an offset, durations in ISO 8601. Milliseconds appear only when they are not zero.
 */

function trimMillis(iso: string): string {
  return iso.replace(/\.000Z$/, 'Z');
}

/** `2026-05-18T15:32:00Z` */
export function formatInstant(date: Date | number): string {
  return trimMillis(new Date(date).toISOString());
}

/** `2026-05-18T17:32:00`: the instant on a clock `offsetSeconds` ahead of UTC, without the offset. */
export function formatLocal(date: Date | number, offsetSeconds: number): string {
  return trimMillis(new Date(new Date(date).getTime() + offsetSeconds * 1000).toISOString()).replace(/Z$/, '');
}

/** `PT1H1M1S`; `PT0S` for zero; fractions of a second to the millisecond (`PT1.5S`). */
export function formatDuration(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const parts = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  return `PT${parts || '0S'}`;
}

/** `YYYY-MM-DD` of a valid calendar date, else undefined. */
export function parseDay(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value) ? value : undefined;
}

/** An ISO 8601 instant with a UTC offset (`Z`, `+02:00`, `+0200`); a naive time is not an instant. */
export const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;
export const NAIVE_PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
