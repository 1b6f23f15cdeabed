// Words and numbers for people: sports, metric values, ISO 8601 durations and dates as the pages show them.

/** `cycling.road+virtual` → `Cycling › road (virtual)` (as the server-rendered pages write it). */
export function sportLabel(sport) {
  const [path = '', ...modifiers] = sport.split('+');
  const parts = path.split('.').map((p) => p.replace(/_/g, ' '));
  const head = parts.map((p, i) => (i === 0 ? p.charAt(0).toUpperCase() + p.slice(1) : p)).join(' › ');
  return modifiers.length ? `${head} (${modifiers.map((m) => m.replace(/_/g, ' ')).join(', ')})` : head;
}

/** The root code of a sport: `cycling.road+virtual` → `cycling`. */
export function rootSport(sport) {
  return sport.split('+')[0].split('.')[0];
}

export const METRIC_UNITS = { power: 'W', speed: 'm/s' };

/** `350 W`, `4.20 m/s`. */
export function formatMetric(value, metric) {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return metric === 'speed' ? `${value.toFixed(2)} m/s` : `${Math.round(value)} W`;
}

/** Seconds of an ISO 8601 duration as the API writes them (`PT1H2M3S`, `P1DT2H`); NaN when malformed. */
export function isoDurationSeconds(iso) {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/.exec(iso ?? '');
  if (!m) return NaN;
  return Number(m[1] ?? 0) * 86400 + Number(m[2] ?? 0) * 3600 + Number(m[3] ?? 0) * 60 + Number(m[4] ?? 0);
}

/** `YYYY-MM-DD` of an instant (UTC), or of today shifted by `days`. */
export function isoDay(date = new Date(), days = 0) {
  return new Date(date.getTime() + days * 86_400_000).toISOString().slice(0, 10);
}

/** `2026-05-18 17:32` from a naive local time `2026-05-18T17:32:00`. */
export function localMinute(naive) {
  return naive.slice(0, 16).replace('T', ' ');
}
