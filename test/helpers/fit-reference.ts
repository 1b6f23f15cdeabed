import { Decoder, Stream, Utils, type FitMessages } from '@garmin/fitsdk';
import { CHANNELS, type Channel } from '../../engine/channels.ts';
import { sportFromFit } from '../../lib/sports.ts';

// ─── The reference: what @garmin/fitsdk decodes, read independently of engine/ingest/fit.ts ────────────

type Fields = Record<string, unknown>;
const num = (m: Fields, key: string) => (typeof m[key] === 'number' && Number.isFinite(m[key]) ? (m[key] as number) : undefined);
const ms = (m: Fields, key: string) => (m[key] instanceof Date ? (m[key] as Date).getTime() : undefined);
const snake = (v: unknown) => (typeof v === 'string' ? v.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() : undefined);

/** Record fields per channel in fitsdk's names and units (m/s, m, °C: the engine's units already). */
const FITSDK_FIELDS: Record<Channel, string[]> = {
  power: ['power'],
  heart_rate: ['heartRate'],
  speed: ['enhancedSpeed', 'speed'],
  cadence: ['cadence'],
  altitude: ['enhancedAltitude', 'altitude'],
  distance: ['distance'],
  latitude: ['positionLat'],
  longitude: ['positionLong'],
  temperature: ['temperature'],
  core_temperature: ['coreTemperature'],
  smo2: ['saturatedHemoglobinPercent'],
  respiration_rate: ['enhancedRespirationRate', 'respirationRate'],
};

export interface Reference {
  sport: string;
  start: number;
  end: number;
  lapStarts: number[];
  /** local_timestamp − timestamp of the activity message, to the quarter hour (0 when absent). */
  utcOffsetSeconds: number;
  /** Record instants (whole seconds, ascending, one per timestamp) and each channel's values (NaN where absent). */
  times: number[];
  channels: Partial<Record<Channel, number[]>>;
  /**
   * A pool swim's channels that its active length messages give instead of its records (speed,
   * distance, and cadence when a length has a stroke rate): empty for other sessions.
   */
  lengthChannels: Channel[];
}

/**
 * A session's records are those from its start_time to start + total_elapsed_time (rounded up to
 * the second) or its timestamp, whichever is later, and before the next session; the last record
 * of a timestamp wins. end = start + elapsed, or the last record when later or elapsed is absent.
 */
export function reference(bytes: Uint8Array): Reference[] {
  const decoder = new Decoder(Stream.fromByteArray(bytes));
  if (!decoder.checkIntegrity()) throw new Error('fitsdk: integrity check failed');
  const m: FitMessages = decoder.read().messages;
  const byTime = new Map<number, Fields>();
  for (const r of (m.recordMesgs ?? []) as Fields[]) if (ms(r, 'timestamp') !== undefined) byTime.set(ms(r, 'timestamp')!, r);
  const records = [...byTime.entries()].sort((a, b) => a[0] - b[0]);
  const utcOffsetSeconds = utcOffsetOf(m);
  const sportMesgs = (m.sportMesgs ?? []) as Fields[];
  const laps = ((m.lapMesgs ?? []) as Fields[])
    .map((l) => ms(l, 'startTime'))
    .filter((t): t is number => t !== undefined)
    .sort((a, b) => a - b);
  const sessions = ((m.sessionMesgs ?? []) as Fields[])
    .filter((s) => ms(s, 'startTime') !== undefined)
    .sort((a, b) => ms(a, 'startTime')! - ms(b, 'startTime')!);
  return sessions.flatMap((s, i) => {
    const start = ms(s, 'startTime')!;
    const elapsed = num(s, 'totalElapsedTime');
    const next = sessions[i + 1] ? ms(sessions[i + 1]!, 'startTime')! : Infinity;
    const ends = [elapsed === undefined ? undefined : Math.ceil((start + elapsed * 1000) / 1000) * 1000, ms(s, 'timestamp')].filter(
      (t): t is number => t !== undefined && t >= start,
    );
    const last = ends.length > 0 ? Math.max(...ends) : Infinity;
    const inSpan = (t: number) => t >= start && t <= last && t < next;
    const mine = records.filter(([t]) => inSpan(t));
    if (mine.length === 0) return [];
    const channels: Reference['channels'] = {};
    for (const channel of CHANNELS) {
      const values = mine.map(([, r]) => FITSDK_FIELDS[channel].map((k) => num(r, k)).find((v) => v !== undefined) ?? NaN);
      if (values.some(Number.isFinite)) channels[channel] = values;
    }
    const sportSource = s['sport'] !== undefined || sportMesgs.length !== 1 ? s : sportMesgs[0]!;
    const lastRecord = mine[mine.length - 1]![0];
    const pool = num(s, 'poolLength');
    const active =
      pool !== undefined && pool > 0
        ? ((m.lengthMesgs ?? []) as Fields[]).filter((l) => l['lengthType'] === 'active' && inSpan(ms(l, 'startTime') ?? -Infinity))
        : [];
    const lengthChannels: Channel[] = active.length
      ? ['speed', 'distance', ...(active.some((l) => (num(l, 'avgSwimmingCadence') ?? 0) > 0) ? (['cadence'] as const) : [])]
      : [];
    return [
      {
        sport: sportFromFit(snake(sportSource['sport']), snake(sportSource['subSport'])),
        start,
        end: elapsed === undefined ? lastRecord : Math.max(start + elapsed * 1000, lastRecord),
        lapStarts: laps.filter(inSpan),
        utcOffsetSeconds,
        times: mine.map(([t]) => t),
        channels,
        lengthChannels,
      },
    ];
  });
}

/** The activity message's local_timestamp − timestamp, to the quarter hour; 0 when absent or beyond ±14 h. */
export function utcOffsetOf(m: FitMessages): number {
  for (const a of (m.activityMesgs ?? []) as Fields[]) {
    const local = num(a, 'localTimestamp');
    const utc = a['timestamp'] instanceof Date ? Utils.convertDateToDateTime(a['timestamp'] as Date) : undefined;
    if (local === undefined || utc === undefined) continue;
    const offset = Math.round((local - utc) / 900) * 900;
    return Math.abs(offset) <= 14 * 3600 ? offset : 0;
  }
  return 0;
}
