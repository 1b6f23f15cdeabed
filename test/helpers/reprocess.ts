import { ingestFile } from '../../engine/ingest/ingest.ts';
import type { IngestedActivity } from '../../engine/ingest/ingested.ts';

/**
 * What the `cli reprocess` tests compare with: a parse as the old ingest rules might have left it,
 * a fresh ingest of an original, and equality as the database and the sample files store values.
 */

/** A parse as the old rules might have left it: other power values (same length), a summary and laps without the new members. */
export function oldRules(a: IngestedActivity) {
  const channels = Object.fromEntries(Object.entries(a.channels).map(([c, v]) => [c, c === 'power' ? v!.map((x) => (x === x ? Math.max(0, x - 7) : x)) : v!.slice()]));
  const summary = JSON.parse(JSON.stringify(a.summary)) as Record<string, Record<string, number>>;
  if (summary.power) summary.power = { max: summary.power.max! - 7, mean: summary.power.mean! - 7 };
  if (summary.speed) summary.speed = { ...summary.speed, mean: summary.speed.mean! * 0.9 };
  const laps = a.laps.map(({ timer_seconds: _t, moving_seconds: _m, ...lap }) => lap);
  return { channels, summary, laps };
}

/** JSON with sorted keys (jsonb reorders them), as stored (NaN, undefined → null). */
export function canonical(value: unknown): string {
  return JSON.stringify(JSON.parse(JSON.stringify(value ?? null)), (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
  );
}

/** The activities a fresh ingest of a FIT original gives under the current rules. */
export async function freshIngest(bytes: Uint8Array): Promise<IngestedActivity[]> {
  const parsed = await ingestFile({ task: 'ingest', format: 'fit', bytes: bytes.slice(), sport: null });
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
