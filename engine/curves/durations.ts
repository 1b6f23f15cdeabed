/**
 * Duration grids for mean-max frames (docs/api-clients.md, "Curves and time series"), in whole seconds.
 *
 * - DEFAULT_DURATIONS: the grid used when a request names none (callers leave out the durations
 *   longer than the data).
 * - allDurations(max) — `durations=all`: every second to 180 s, then every 5 s to 600 s, every 10 s
 *   to 1800 s, every 30 s to 3600 s and every 60 s beyond; the grid points ≤ max, ascending. The
 *   grid's steps start from the previous part's end (185, 190, … 600, 610, … 1800, 1830, … 3600,
 *   3660, …), so every part's end is a grid point. `max` < 1 (or NaN) gives an empty grid; an infinite
 *   `max` throws a RangeError.
 * - parseDurations: the `durations` query parameter. Comma-separated whole numbers of seconds, also
 *   given as repeated query values (`?durations=5,60&durations=300`); whitespace around an item is
 *   allowed; or the single word `all` (any case). The result is ascending and de-duplicated.
 *   Rejected, with a message naming the bad item: an empty item (`5,,60`, a trailing comma, an empty
 *   value), anything but decimal digits (`1.5`, `1e3`, `+5`, `abc`), zero or negative durations,
 *   durations over 7 days (604,800 s), more than 2,000 items (counted as given, before
 *   de-duplication), and `all` mixed with numbers. Absent (undefined or no values): `durations`
 *   undefined, the caller's default.
 */

/** The default mean-max grid (s). */
export const DEFAULT_DURATIONS: readonly number[] = Object.freeze([
  1, 2, 5, 10, 15, 20, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 21600,
]);

/** The longest duration a request may ask for: 7 days (s). */
export const MAX_DURATION = 7 * 24 * 3600;

/** The most durations a request may list. */
export const MAX_DURATION_COUNT = 2000;

/** The `all` grid, as (up to, step) parts: every `step` s from the previous part's end to `upTo`. */
const ALL_GRID: readonly (readonly [upTo: number, step: number])[] = [
  [180, 1],
  [600, 5],
  [1800, 10],
  [3600, 30],
  [Infinity, 60],
];

/** The `all` grid up to max (inclusive of grid points ≤ max), ascending. */
export function allDurations(max: number): Int32Array {
  if (max === Infinity) throw new RangeError('allDurations: max must be finite');
  const out: number[] = [];
  let d = 0;
  for (const [upTo, step] of ALL_GRID) {
    while (d + step <= upTo && d + step <= max) {
      d += step;
      out.push(d);
    }
    if (d + step > max) break;
  }
  return Int32Array.from(out);
}

export type ParsedDurations = { ok: true; durations: Int32Array | 'all' | undefined } | { ok: false; message: string };

/** Parses the `durations` query parameter (see the header). */
export function parseDurations(text: string | string[] | undefined): ParsedDurations {
  if (text === undefined) return { ok: true, durations: undefined };
  const values = typeof text === 'string' ? [text] : text;
  if (values.length === 0) return { ok: true, durations: undefined };
  const items: string[] = [];
  for (const value of values) {
    for (const raw of value.split(',')) {
      items.push(raw.trim());
      if (items.length > MAX_DURATION_COUNT) {
        return { ok: false, message: `durations: at most ${MAX_DURATION_COUNT} values are allowed` };
      }
    }
  }
  if (items.some((item) => item.toLowerCase() === 'all')) {
    if (items.length === 1) return { ok: true, durations: 'all' };
    return { ok: false, message: 'durations: "all" cannot be combined with other values' };
  }
  const seconds: number[] = [];
  for (const item of items) {
    if (item === '') return { ok: false, message: 'durations: empty item (a stray comma or an empty value)' };
    if (/^-\d+$/.test(item)) {
      return { ok: false, message: `durations: "${quoteable(item)}" is negative; durations are positive whole seconds` };
    }
    if (!/^\d+$/.test(item)) {
      return { ok: false, message: `durations: "${quoteable(item)}" is not a whole number of seconds` };
    }
    const d = Number(item);
    if (d === 0) return { ok: false, message: `durations: "${item}" is zero; durations are positive whole seconds` };
    if (d > MAX_DURATION) {
      return { ok: false, message: `durations: "${quoteable(item)}" is longer than 7 days (${MAX_DURATION} s)` };
    }
    seconds.push(d);
  }
  const sorted = Int32Array.from(seconds).sort();
  let m = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[m - 1]) sorted[m++] = sorted[i]!;
  return { ok: true, durations: sorted.slice(0, m) };
}

/** An item as it appears in a message: at most 40 characters. */
function quoteable(item: string): string {
  return item.length > 40 ? `${item.slice(0, 40)}…` : item;
}
