/**
 * The wire formats of time (docs/api-clients.md, "Conventions"): instants in UTC with `Z`, local wall-clock times
 * without an offset, durations in ISO 8601. Milliseconds appear only when they are not zero.
 */

/** `2026-05-18T15:32:00Z` */
export function formatInstant(date: Date | number): string {
  return `${wallClock(typeof date === 'number' ? date : date.getTime())}Z`;
}

/** `2026-05-18T17:32:00`: the instant on a clock `offsetSeconds` ahead of UTC, without the offset. */
export function formatLocal(date: Date | number, offsetSeconds: number): string {
  return wallClock((typeof date === 'number' ? date : date.getTime()) + offsetSeconds * 1000);
}

/**
 * `YYYY-MM-DDTHH:MM:SS[.mmm]` of epoch milliseconds: toISOString's text without the `Z` and without
 * zero milliseconds, by integer arithmetic (days to the civil date: H. Hinnant's `civil_from_days`).
 * Every activity, lap and trace of a list page formats several instants: about 110 ns each like this
 * against 400–500 ns through toISOString and a regular expression. Outside years 1–9999 (and for
 * NaN: a RangeError) toISOString's own text.
 */
function wallClock(ms: number): string {
  if (!(ms >= EARLIEST_MS && ms <= LATEST_MS) || !Number.isInteger(ms)) {
    const iso = new Date(ms).toISOString();
    return iso.endsWith('.000Z') ? iso.slice(0, -5) : iso.slice(0, -1);
  }
  const days = Math.floor(ms / 86_400_000);
  const inDay = ms - days * 86_400_000;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  // civil_from_days: eras of 400 years from 0000-03-01, so that the leap day ends its year.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const m5 = Math.floor((5 * dayOfYear + 2) / 153); // months from March
  const day = dayOfYear - Math.floor((153 * m5 + 2) / 5) + 1;
  const month = m5 < 10 ? m5 + 3 : m5 - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const yyyy = year >= 1000 ? `${year}` : year >= 100 ? `0${year}` : year >= 10 ? `00${year}` : `000${year}`;
  const text = `${yyyy}-${two(month)}-${two(day)}T${two(hours)}:${two(minutes)}:${two(seconds)}`;
  return millis ? `${text}.${millis >= 100 ? millis : millis >= 10 ? `0${millis}` : `00${millis}`}` : text;
}

const two = (n: number) => (n >= 10 ? `${n}` : `0${n}`);

/** `PT1H1M1S`; `PT0S` for zero; fractions of a second to the millisecond (`PT1.5S`). */
export function formatDuration(seconds: number): string {
  const ms = Math.max(0, Math.round(seconds * 1000));
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  const parts = `${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s ? `${s}S` : ''}`;
  return `PT${parts || '0S'}`;
}

/** Instants and dates are kept within years 1–9999: what ISO 8601's four-digit years and PostgreSQL both hold. */
const EARLIEST_MS = Date.UTC(2000, 0, 1) - 730_119 * 86_400_000; // 0001-01-01T00:00:00Z
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The calendar date `days` after `day` (YYYY-MM-DD; negative: before). */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** `YYYY-MM-DD` of a valid calendar date (years 0001–9999), else undefined. */
export function parseDay(value: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value.startsWith('0000')) return undefined;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value) ? value : undefined;
}

/**
 * ISO 8601 extended date-time: `YYYY-MM-DDThh:mm[:ss[.fff…]]` (a space or lowercase `t` also
 * separates date and time, as RFC 3339 allows) with `Z`, `±hh`, `±hh:mm` or `±hhmm`.
 */
const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
/** Real UTC offsets lie within −12:00 … +14:00. */
const MAX_OFFSET_SECONDS = 14 * 3600;

export type ParsedInstant =
  | { ok: true /** epoch ms */; t: number; offsetSeconds: number }
  | { ok: false /** a valid date-time without an offset: not an instant */; naive: boolean; why: string };

/**
 * An instant written with its UTC offset (CSV timestamps, query bounds, trace times). A naive
 * date-time is refused as such (`naive: true`), so callers can say what is missing.
 */
export function parseInstant(text: string): ParsedInstant {
  const invalid = (why: string): ParsedInstant => ({ ok: false, naive: false, why });
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return invalid('is not an ISO 8601 date-time (e.g. 2026-05-18T15:32:00Z)');
  const [, y, mo, d, h, mi, s, fraction, zulu, sign, oh, om] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s ?? '0'].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(2000, 0, 1, hour, minute, second));
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC: it maps years 0–99 to 1900–1999
  if (month < 1 || month > 12 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    return invalid('is not a valid date and time');
  if (!zulu && !sign) return { ok: false, naive: true, why: 'has no UTC offset (add Z or ±hh:mm)' };
  const offsetSeconds = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om ?? 0) * 60) + 0 : 0; // + 0: no −0
  if (Number(om ?? 0) > 59 || Math.abs(offsetSeconds) > MAX_OFFSET_SECONDS) return invalid('has a UTC offset beyond ±14:00');
  const ms = fraction ? Number(`0.${fraction}`) * 1000 : 0;
  const t = date.getTime() + ms - offsetSeconds * 1000;
  if (t < EARLIEST_MS || t > LATEST_MS) return invalid('is outside the years 0001–9999 (in UTC)');
  return { ok: true, t, offsetSeconds };
}
