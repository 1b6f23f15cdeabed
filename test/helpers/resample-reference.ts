/**
 * The ingest rules v2 of engine/ingest/resample.ts restated second by second, for tests to compare
 * the engine with: straightforward loops over every second and every pair of samples, no shared
 * code with the engine (only its two constants, which the tests pin separately).
 */
import type { Pause, Recording } from '../../engine/ingest/recording.ts';
import type { Channel } from '../../engine/channels.ts';
import { MAX_FILL_SECONDS, STANDSTILL_SPEED } from '../../engine/ingest/resample.ts';

export interface ReferenceGrid {
  start: number;
  length: number;
  running: number[];
  /** Every channel of the recording (also those without any value: the engine drops those). */
  channels: Partial<Record<Channel, number[]>>;
  pauses: Pause[];
}

export function referenceResample(rec: Recording): ReferenceGrid {
  const start = Math.floor(rec.start.getTime() / 1000) * 1000;
  const ts = Array.from(rec.timestamps);
  const bin = (t: number) => Math.floor((t - start) / 1000);
  const length = Math.max(1, Math.ceil((rec.end.getTime() - start) / 1000), ts.length > 0 ? bin(ts[ts.length - 1]!) + 1 : 0);
  const inGrid = (k: number) => bin(ts[k]!) >= 0 && bin(ts[k]!) < length;

  // Pauses: the file's, else every gap of more than MAX_FILL_SECONDS, from the sample before it to the sample after it.
  const pauses: Pause[] = rec.pauses ?? [];
  if (!rec.pauses)
    for (let k = 0; k + 1 < ts.length; k++)
      if (ts[k + 1]! - ts[k]! > MAX_FILL_SECONDS * 1000) pauses.push({ start: ts[k]!, end: ts[k + 1]! });

  // Second i is paused when it starts after a pause's start and ends by the pause's end.
  const instant = (i: number) => start + i * 1000;
  const running = Array.from({ length }, (_, i) => (pauses.some((p) => p.start < instant(i) && instant(i) + 1000 <= p.end) ? 0 : 1));
  const timerRunsBetween = (a: number, b: number) => !pauses.some((p) => p.start < b && p.end > a);
  const sampled = new Set(ts.filter((_, k) => inGrid(k)).map(bin));
  const hasSample = (i: number) => sampled.has(i);

  /** Per second, the last recorded (non-NaN) value among its samples (samples ascend). */
  const binned = (values: Float64Array | undefined) => {
    const out = Array.from({ length }, () => Number.NaN);
    if (values) for (let k = 0; k < ts.length; k++) if (inGrid(k) && !Number.isNaN(values[k]!)) out[bin(ts[k]!)] = values[k]!;
    return out;
  };
  const speed = binned(rec.channels.speed);
  const power = binned(rec.channels.power);
  const cadence = binned(rec.channels.cadence);
  /** Second i records speed, power or cadence and none shows motion. */
  const standstill = (i: number) => {
    const known = [speed[i]!, power[i]!, cadence[i]!].filter((v) => !Number.isNaN(v));
    return known.length > 0 && !(speed[i]! >= STANDSTILL_SPEED) && !(power[i]! > 0) && !(cadence[i]! > 0);
  };

  const channels: ReferenceGrid['channels'] = {};
  for (const [name, values] of Object.entries(rec.channels) as [Channel, Float64Array][]) {
    const placed = binned(values);
    const out = placed.slice();
    // Gaps between consecutive samples, at most MAX_FILL_SECONDS long, the timer running throughout.
    for (let k = 0; k + 1 < ts.length; k++) {
      if (!inGrid(k) || !inGrid(k + 1)) continue;
      const b0 = bin(ts[k]!);
      const b1 = bin(ts[k + 1]!);
      if (ts[k + 1]! - ts[k]! > MAX_FILL_SECONDS * 1000 || !timerRunsBetween(ts[k]!, ts[k + 1]!)) continue;
      const v0 = placed[b0]!;
      const v1 = placed[b1]!;
      for (let i = b0 + 1; i < b1; i++) {
        if (Number.isNaN(v0)) out[i] = Number.NaN;
        else if (standstill(b0) || Number.isNaN(v1)) out[i] = v0;
        else out[i] = v0 + ((v1 - v0) * (i - b0)) / (b1 - b0);
      }
    }
    // Lead-ins: from a second where the timer starts running, without a sample, to the first sample after it.
    for (let a = 0; a < length; a++) {
      if (!running[a] || (a > 0 && running[a - 1]) || hasSample(a)) continue;
      let b = a;
      while (b < length && !hasSample(b)) b++;
      if (b >= length || b - a > MAX_FILL_SECONDS) continue;
      let runs = true;
      for (let i = a; i <= b; i++) if (!running[i]) runs = false;
      if (runs && name !== 'distance' && !Number.isNaN(placed[b]!)) for (let i = a; i < b; i++) out[i] = placed[b]!;
    }
    for (let i = 0; i < length; i++) if (!running[i] && name !== 'distance') out[i] = Number.NaN;
    channels[name] = out;
  }
  return { start, length, running, channels, pauses };
}
