import { ingestFile } from '../../engine/ingest/ingest.ts';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';
import { computeCurves, CURVES_VERSION, MEAN_MAX_METRICS, zeroFilled } from '../../engine/curves/activity-curves.ts';
import { meanMaxAll } from '../../engine/curves/mean-max.ts';
import type { Channel } from '../../engine/channels.ts';

/**
 * What the `cli reprocess` tests compare with: a parse as the old ingest rules might have left it,
 * a fresh ingest of an original, and equality as the database and the sample files store values.
 */

/** A parse as the old rules might have left it: other power values (same length), a summary and laps without the new members. */
export function oldRules(a: IngestedActivity) {
  const channels = Object.fromEntries(
    Object.entries(a.channels).map(([c, v]) => [c, c === 'power' ? v!.map((x) => (x === x ? Math.max(0, x - 7) : x)) : v!.slice()]),
  );
  const summary = JSON.parse(JSON.stringify(a.summary)) as Record<string, Record<string, number>>;
  if (summary.power) summary.power = { max: summary.power.max! - 7, mean: summary.power.mean! - 7 };
  if (summary.speed) summary.speed = { ...summary.speed, mean: summary.speed.mean! * 0.9 };
  const laps = a.laps.map(({ timer_seconds: _t, moving_seconds: _m, ...lap }) => lap);
  return { channels, summary, laps };
}

/**
 * An activity's `activity_curves` rows as the code before 2026-11-28 wrote them (the layout of the
 * migrations before 2026-11-28T12-compact-curves): every array raw little-endian, with the mean-max at
 * every duration (`best`, Float64) and its starts (`best_start`) of power and speed.
 */
export function oldLayoutCurveRows(activityId: string, channels: Partial<Record<Channel, Float64Array>>, now: Date) {
  const raw = (a: Float64Array | Int32Array | null) => (a ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : null);
  return computeCurves(channels).map((c) => {
    const meanMax = (MEAN_MAX_METRICS as readonly string[]).includes(c.metric) ? meanMaxAll(zeroFilled(channels[c.metric]!)) : null;
    return {
      activity_id: activityId,
      metric: c.metric,
      version: CURVES_VERSION,
      best: raw(meanMax?.best ?? null),
      best_start: raw(meanMax?.start ?? null),
      level_duration: raw(c.levelDuration),
      level_start: raw(c.levelStart),
      awd: raw(c.awd)!,
      computed_at: now,
    };
  });
}

/** JSON with sorted keys (jsonb reorders them), as stored (NaN, undefined → null). */
export function canonical(value: unknown): string {
  return JSON.stringify(JSON.parse(JSON.stringify(value ?? null)), (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/** The activities a fresh ingest of a FIT original gives under the current rules. */
export async function freshIngest(bytes: Uint8Array): Promise<IngestedActivity[]> {
  const parsed = await ingestFile({ format: 'fit', bytes: bytes.slice(), sport: null });
  if (!parsed.ok) throw new Error(parsed.code);
  return parsed.activities;
}

/** The first `length` values equal (NaN equal to NaN; a missing channel is all NaN). */
export function sameValues(a: Float64Array | undefined, b: Float64Array | undefined, length: number): boolean {
  for (let i = 0; i < length; i++) {
    const x = a ? a[i]! : NaN;
    const y = b ? b[i]! : NaN;
    if (x !== y && !(Number.isNaN(x) && Number.isNaN(y))) return false;
  }
  return true;
}
