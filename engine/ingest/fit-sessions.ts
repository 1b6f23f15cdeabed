/**
 * A FIT file's sessions and laps as engine/ingest/fit.ts reads them: each session's span, sport and
 * device summary, the laps, the file's UTC offset, a pool swim's lengths.
 */
import type { ParsedFit } from 'fit-file-parser';
import { sportFromFit } from '../../lib/sports.ts';
import { DEVICE_SUMMARY_FIELDS, type DeviceSummary, type Lap, type SwimLength } from './recording.ts';
import { fields, num, time, type Fields } from './fit-fields.ts';

/** Real UTC offsets lie within −12 h … +14 h; a `local_timestamp` further off is a device clock error. */
const MAX_UTC_OFFSET_SECONDS = 14 * 3600;

export interface SessionSpan {
  sport: string;
  /** Session start_time, epoch ms. */
  start: number;
  /** start + total_elapsed_time, when the session has it. */
  elapsedEnd: number | undefined;
  /**
   * The last instant whose records belong to the session: start + total_elapsed_time rounded up to
   * the whole second (records carry whole seconds), or the session's own timestamp when later
   * (some devices' elapsed time leaves out a pause); unbounded when the session has neither.
   */
  selectionEnd: number;
  deviceSummary: DeviceSummary;
  /** A pool swim's pool length (m): the session's pool_length (only pool swims have one). */
  poolLength: number | undefined;
  /** The session message's own timestamp, epoch ms. */
  timestamp: number | undefined;
  /** Its average cadence has a fractional part (avg_fractional_cadence). */
  fractionalCadence: boolean;
}

export function sessionSpans(fit: ParsedFit): SessionSpan[] {
  const sportMessages = fit.sports ?? [];
  const onlySport = sportMessages.length === 1 ? fields(sportMessages[0]!) : undefined;
  const spans: SessionSpan[] = [];
  for (const message of fit.sessions ?? []) {
    const s = fields(message);
    const elapsed = num(s, 'total_elapsed_time');
    const stamp = time(s, 'timestamp');
    const start = time(s, 'start_time') ?? (stamp !== undefined && elapsed !== undefined ? stamp - elapsed * 1000 : undefined);
    if (start === undefined) continue;
    const elapsedEnd = elapsed !== undefined && elapsed >= 0 ? start + elapsed * 1000 : undefined;
    const bounds = [elapsedEnd === undefined ? undefined : Math.ceil(elapsedEnd / 1000) * 1000, stamp].filter(
      (t): t is number => t !== undefined && t >= start,
    );
    const hasSport = s['sport'] !== undefined;
    const sport = hasSport
      ? sportFromFit(sportName(s['sport']), sportName(s['sub_sport']))
      : sportFromFit(sportName(onlySport?.['sport']), sportName(onlySport?.['sub_sport']));
    const pool = num(s, 'pool_length');
    const poolLength = pool !== undefined && pool > 0 ? pool : undefined;
    spans.push({
      sport,
      start,
      elapsedEnd,
      selectionEnd: bounds.length > 0 ? Math.max(...bounds) : Infinity,
      deviceSummary: deviceSummary(s),
      poolLength,
      timestamp: stamp,
      fractionalCadence: num(s, 'avg_fractional_cadence') !== undefined,
    });
  }
  return spans.sort((a, b) => a.start - b.start);
}

/** The session message's own values (recording.ts DEVICE_SUMMARY_FIELDS): enhanced speeds where present, fractional cadence added. */
function deviceSummary(s: Fields): DeviceSummary {
  const out: DeviceSummary = {};
  for (const field of DEVICE_SUMMARY_FIELDS) {
    const v = field === 'avg_speed' || field === 'max_speed' ? (num(s, `enhanced_${field}`) ?? num(s, field)) : num(s, field);
    if (v !== undefined) out[field] = v;
  }
  const fraction = num(s, 'avg_fractional_cadence');
  if (out.avg_cadence !== undefined && fraction !== undefined) out.avg_cadence += fraction;
  return out;
}

function sportName(v: unknown): string | number | undefined {
  return typeof v === 'string' || typeof v === 'number' ? v : undefined;
}

export function lapSpans(laps: object[]): Lap[] {
  const out: Lap[] = [];
  for (const message of laps) {
    const l = fields(message);
    const start = time(l, 'start_time');
    if (start === undefined) continue;
    const elapsed = num(l, 'total_elapsed_time');
    const stamp = time(l, 'timestamp');
    const end = elapsed !== undefined && elapsed >= 0 ? start + elapsed * 1000 : stamp !== undefined && stamp >= start ? stamp : start;
    const ascent = num(l, 'total_ascent');
    const descent = num(l, 'total_descent');
    out.push({
      start: new Date(start),
      end: new Date(end),
      ...(ascent !== undefined ? { totalAscent: ascent } : {}),
      ...(descent !== undefined ? { totalDescent: descent } : {}),
    });
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** The activity message's local_timestamp − timestamp, to the nearest 15 minutes; 0 when absent or implausible. */
export function utcOffset(fit: ParsedFit): number {
  for (const message of fit.messages?.activity ?? []) {
    const a = fields(message);
    const utc = time(a, 'timestamp');
    const local = time(a, 'local_timestamp');
    if (utc === undefined || local === undefined) continue;
    const offset = Math.round((local - utc) / 1000 / 900) * 900;
    return Math.abs(offset) <= MAX_UTC_OFFSET_SECONDS ? offset + 0 : 0; // + 0: no −0
  }
  return 0;
}

/**
 * A pool swim's active lengths within [from, to] (FIT length messages whose length_type is active and
 * whose start lies in the session), each covering the pool's length at the device's own speed and
 * stroke rate (a drill length, which has neither, at the pool's length over its time and no stroke
 * rate), ascending; `{}` when the session has none (the records are used as they are).
 */
export function swimLengths(messages: object[], from: number, to: number, poolLength: number): { lengths?: SwimLength[] } {
  const lengths: SwimLength[] = [];
  for (const message of messages) {
    const l = fields(message);
    const start = time(l, 'start_time');
    const elapsed = num(l, 'total_elapsed_time');
    const speed = num(l, 'avg_speed');
    if (l['length_type'] !== 'active' || start === undefined || !(start >= from && start <= to) || elapsed === undefined || !(elapsed > 0))
      continue;
    // A drill length has no speed or strokes of its own (0): it covered the pool in its time, at an unknown stroke rate.
    const cadence = num(l, 'avg_swimming_cadence');
    lengths.push({
      start,
      end: start + elapsed * 1000,
      speed: speed !== undefined && speed > 0 ? speed : poolLength / elapsed,
      cadence: cadence !== undefined && cadence > 0 ? cadence : undefined,
      distance: poolLength,
    });
  }
  lengths.sort((a, b) => a.start - b.start);
  // A drill set's lengths can all carry the set's start (two 53 s lengths both from 449 s): a length
  // starting more than a second before the previous one ends follows it instead.
  for (let i = 1; i < lengths.length; i++) {
    const previous = lengths[i - 1]!;
    const l = lengths[i]!;
    if (l.start < previous.end - 1000) lengths[i] = { ...l, start: previous.end, end: previous.end + (l.end - l.start) };
  }
  return lengths.length ? { lengths } : {};
}
