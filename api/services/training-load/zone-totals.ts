import type { Db } from '../../../db/database.ts';
import { loadBetween } from '../../../db/training-load.ts';
import { ZONE_METRICS } from '../../../engine/load/zones.ts';
import type { FrameColumn } from '../../../engine/frames/frame.ts';

interface StoredZones {
  zones: { zone: number; name: string; seconds: number }[];
}

/** Seconds per metric and zone over the activities in [fromDay, toDay] (longitudinal-zones' frame). */
export async function zoneTotals(
  db: Db,
  userId: string,
  fromDay: string,
  toDay: string,
  sports: string[] | undefined,
): Promise<FrameColumn[]> {
  const rows = await loadBetween(db, userId, fromDay, toDay, sports);
  // metric → zone → { name (the newest activity's), seconds, activities }
  const totals = new Map<string, Map<number, { name: string; seconds: number; activities: number }>>();
  for (const row of rows) {
    for (const [metric, stored] of Object.entries(row.time_in_zones as Record<string, StoredZones>)) {
      const byZone = totals.get(metric) ?? new Map();
      totals.set(metric, byZone);
      for (const z of stored.zones) {
        const t = byZone.get(z.zone) ?? { name: z.name, seconds: 0, activities: 0 };
        t.name = z.name; // rows come oldest first: the newest name stays
        t.seconds += z.seconds;
        t.activities++;
        byZone.set(z.zone, t);
      }
    }
  }
  const out: { metric: string; zone: number; name: string; seconds: number; activities: number }[] = [];
  for (const metric of ZONE_METRICS) {
    const byZone = totals.get(metric);
    if (!byZone) continue;
    for (const zone of [...byZone.keys()].sort((a, b) => a - b)) out.push({ metric, zone, ...byZone.get(zone)! });
  }
  const strings = (values: string[]) => {
    const labels = [...new Set(values)];
    return { codes: Int32Array.from(values, (v) => labels.indexOf(v)), labels };
  };
  return [
    { name: 'metric', type: 'string', ...strings(out.map((o) => o.metric)) },
    { name: 'zone', type: 'int32', values: Int32Array.from(out, (o) => o.zone) },
    { name: 'name', type: 'string', ...strings(out.map((o) => o.name)) },
    { name: 'seconds', type: 'double', values: Float64Array.from(out, (o) => o.seconds) },
    { name: 'activities', type: 'int32', values: Int32Array.from(out, (o) => o.activities) },
  ];
}
