import test from 'ava';
import { formatInstant, formatLocal } from '../lib/time.ts';
import { prng } from './helpers/prng.ts';

/** What the formatters must equal: toISOString's text, without zero milliseconds (and, local, without the `Z`). */
const isoInstant = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
const isoLocal = (ms: number, offsetSeconds: number) => isoInstant(ms + offsetSeconds * 1000).replace(/Z$/, '');

const YEAR_1 = Date.UTC(2000, 0, 1) - 730_119 * 86_400_000;
const YEAR_9999_END = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

test("formatInstant and formatLocal write toISOString's text over years 1–9999: leap days, century years, before 1970, milliseconds", (t) => {
  const edges = [
    YEAR_1,
    YEAR_9999_END,
    Date.parse('0001-02-28T23:59:59.999Z'),
    Date.parse('0099-12-31T00:00:00Z'),
    Date.parse('0400-02-29T12:00:00Z'),
    Date.UTC(999, 2, 1),
    Date.UTC(1600, 1, 29),
    Date.UTC(1900, 1, 28, 12),
    Date.UTC(1900, 2, 1),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    0,
    1,
    Date.UTC(2000, 1, 29, 0, 0, 0, 10),
    Date.UTC(2024, 1, 29, 23, 59, 59, 100),
    Date.UTC(2100, 1, 28, 23, 59, 59),
    Date.UTC(2100, 2, 1),
    Date.UTC(2026, 4, 18, 15, 32),
  ];
  const rand = prng(20261124);
  const instants = [...edges];
  for (let i = 0; i < 20_000; i++) instants.push(YEAR_1 + Math.floor(rand() * (YEAR_9999_END - YEAR_1)));
  for (const base of edges) for (let k = -50; k <= 50; k++) instants.push(base + k * 86_399_999);
  let checked = 0;
  for (const ms of instants) {
    if (ms < YEAR_1 || ms > YEAR_9999_END) continue;
    if (formatInstant(ms) !== isoInstant(ms)) return t.fail(`formatInstant(${ms}): ${formatInstant(ms)}, not ${isoInstant(ms)}`);
    if (formatInstant(new Date(ms)) !== isoInstant(ms)) return t.fail(`formatInstant(new Date(${ms}))`);
    for (const offset of [0, 3600, -50_400, 50_400, 19_800, -12_600]) {
      const local = ms + offset * 1000;
      if (local < YEAR_1 || local > YEAR_9999_END) continue;
      if (formatLocal(ms, offset) !== isoLocal(ms, offset))
        return t.fail(`formatLocal(${ms}, ${offset}): ${formatLocal(ms, offset)}, not ${isoLocal(ms, offset)}`);
    }
    checked++;
  }
  t.true(checked > 21_000, `${checked} instants`);
  t.is(formatInstant(Date.UTC(2026, 4, 18, 15, 32)), '2026-05-18T15:32:00Z');
  t.is(formatLocal(Date.UTC(2026, 4, 18, 15, 32, 0, 5), 7200), '2026-05-18T17:32:00.005');
  t.is(formatInstant(YEAR_1), '0001-01-01T00:00:00Z');
});

test("outside years 1–9999 the formatters fall back to toISOString's text; an invalid instant is a RangeError", (t) => {
  t.is(formatInstant(YEAR_9999_END + 1), '+010000-01-01T00:00:00Z');
  t.is(formatInstant(YEAR_1 - 1), '0000-12-31T23:59:59.999Z');
  t.is(formatLocal(YEAR_9999_END, 1), '+010000-01-01T00:00:00.999');
  t.is(formatInstant(1.5), isoInstant(1.5), 'fractions of a millisecond are dropped, as by Date');
  t.throws(() => formatInstant(Number.NaN), { instanceOf: RangeError });
  t.throws(() => formatLocal(new Date(Number.NaN), 0), { instanceOf: RangeError });
});
