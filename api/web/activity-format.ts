/**
 * How the activity pages show numbers: durations, grouped numbers, channel names and a summary's
 * statistics (api/web/activities.ts, api/web/activity-checks.ts).
 */

/** `1:02:03`, or `2:03` under an hour. */
export function clockDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** `1,234`, with `digits` decimals. */
export const grouped = (v: number, digits = 0) =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A finite number, else undefined (stored JSON may hold anything). */
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

const METRIC_LABELS: Record<string, string> = {
  heart_rate: 'heart rate',
  core_temperature: 'core temperature',
  smo2: 'SmO₂',
};
/** A channel's name as text reads it: `heart rate`, `SmO₂`. */
export const metricLabel = (m: string) => METRIC_LABELS[m] ?? m.replace(/_/g, ' ');

export type Stats = Record<string, unknown>;
/** One member of a stored summary or lap (`power` → `{ max, mean, … }`), when it is an object. */
export const statsOf = (owner: Record<string, unknown> | null | undefined, key: string): Stats | undefined => {
  const v = owner?.[key];
  return v && typeof v === 'object' ? (v as Stats) : undefined;
};
