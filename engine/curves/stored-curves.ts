/**
 * Longitudinal curves from the curves stored per activity in `activity_curves`, read in the engine
 * pool from their stored bytes (engine/curves/curve-codec.ts: each array in its row's encoding), so
 * that the API's event loop only copies bytes. Activities come oldest first.
 *
 * mergeStoredLevels: the value-indexed curve, per intensity level the longest duration of any
 * activity, its window's start and its activity; ties keep the older activity. The same answer as
 * decoding every curve and merging them level by level (mergeValueIndexed in
 * engine/curves/value-indexed.ts), mostly without decoding:
 *
 * A stored level curve is a staircase, non-increasing in the level and ≥ 0 (valueIndexed makes it
 * so), and so is the merge of such curves, a curve shorter than another counting 0 beyond its end. A
 * run of levels [from, end) at duration v therefore lengthens the merged curve on a suffix of the run
 * (where the merge is below v), and nowhere when the merge at the run's last level is already ≥ v.
 * So each activity costs one comparison per run of its duration curve (about half as many runs as
 * levels), its starts are decoded only when it lengthens some level, and what it lengthens is filled.
 * An input that breaks the premise (a level curve rising with the level, or negative) is merged the
 * plain way instead: decoded, then mergeValueIndexed.
 *
 * dailyAwdPercentiles: the activities' AWD arrays summed per training day, then per level the highest
 * day and quantiles over the days (engine/curves/awd.ts).
 */
import { CurveEncoding, decodeArrays, decodeRuns, encodedLength, runScratch, type EncodedArrays } from './curve-codec.ts';
import { awdPercentiles, sumAwd, type AwdPercentiles } from './awd.ts';
import type { LevelCurve } from './longitudinal.ts';
import { mergeValueIndexed } from './value-indexed.ts';
import { checkStop } from '../stop.ts';

class NotAStaircase extends Error {}

export function mergeStoredLevels(duration: EncodedArrays, start: EncodedArrays): LevelCurve {
  const count = duration.encoding.length;
  if (start.encoding.length !== count)
    throw new RangeError(`mergeStoredLevels: ${count} duration curves, ${start.encoding.length} start curves`);
  try {
    return mergeStaircases(duration, start);
  } catch (err) {
    if (!(err instanceof NotAStaircase)) throw err;
    const d = decodeArrays(duration);
    const s = decodeArrays(start);
    return mergeValueIndexed(d.map((x, i) => ({ duration: x, start: s[i]! })));
  }
}

/** The merged curve being built, and what it takes to lengthen it (rare: off the hot loops). */
class Envelope {
  readonly duration: Int32Array;
  readonly start: Int32Array;
  readonly owner: Int32Array;
  /** The current activity's start runs, decoded when it first lengthens a level (-1: not yet). */
  private startRuns = -1;
  private s = 0;
  private readonly scratch: { values: Int32Array; ends: Int32Array };

  constructor(
    top: number,
    private readonly starts: EncodedArrays,
  ) {
    this.duration = new Int32Array(top);
    this.start = new Int32Array(top).fill(-1);
    this.owner = new Int32Array(top).fill(-1);
    this.scratch = runScratch(top);
  }

  /** The next activity: its starts not decoded yet. */
  begin(): void {
    this.startRuns = -1;
    this.s = 0;
  }

  /** Activity a holds duration v at levels [from, end), and the merge is below v at end − 1: it is below on a suffix [k, end). */
  lengthen(a: number, from: number, end: number, v: number): void {
    const { duration, scratch } = this;
    let k = end - 1;
    while (k > from && duration[k - 1]! < v) k--;
    duration.fill(v, k, end);
    this.owner.fill(a, k, end);
    if (this.startRuns < 0)
      this.startRuns = decodeRuns(
        this.starts.bytes,
        this.starts.offsets[a]!,
        this.starts.offsets[a + 1]!,
        this.starts.encoding[a]!,
        scratch.values,
        scratch.ends,
      );
    let s = this.s;
    while (scratch.ends[s]! <= k) s++;
    for (let i = k; ; s++) {
      const stop = Math.min(end, scratch.ends[s]!);
      this.start.fill(scratch.values[s]!, i, stop);
      i = stop;
      if (stop === end) break;
    }
    this.s = s;
  }
}

function mergeStaircases(duration: EncodedArrays, start: EncodedArrays): LevelCurve {
  const count = duration.encoding.length;
  const lengths = new Int32Array(count);
  let top = 0;
  for (let a = 0; a < count; a++) {
    const n = encodedLength(duration.bytes, duration.offsets[a]!, duration.offsets[a + 1]!, duration.encoding[a]!);
    const m = encodedLength(start.bytes, start.offsets[a]!, start.offsets[a + 1]!, start.encoding[a]!);
    if (n !== m) throw new RangeError(`mergeStoredLevels: curve ${a} has ${n} durations and ${m} starts`);
    lengths[a] = n;
    if (n > top) top = n;
  }
  const env = new Envelope(top, start);
  const merged = env.duration;
  const bytes = duration.bytes;
  // Room for the runs of a raw (encoding 0) row.
  let values: Int32Array | undefined;
  let ends: Int32Array | undefined;
  for (let a = 0; a < count; a++) {
    if ((a & 255) === 0) checkStop();
    env.begin();
    const n = lengths[a]!;
    const to = duration.offsets[a + 1]!;
    let previous = 0x7fffffff;
    if (duration.encoding[a] === CurveEncoding.DELTA_RUNS) {
      // The hot loop: DELTA_RUNS read in place (the format of engine/curves/curve-codec.ts, as decodeRuns
      // reads it; the tests hold the two to the encoder), one comparison per run.
      let p = duration.offsets[a]!;
      while (p < to && bytes[p]! >= 128) p++; // the length, read above
      p++;
      let i = 0;
      let v = 0;
      while (i < n) {
        let t = bytes[p++]!;
        if (t < 128) v = (v + ((t >>> 2) ^ -((t >>> 1) & 1))) | 0;
        else {
          let x = t & 127;
          let scale = 128;
          let b: number;
          do {
            if (p >= to || scale > 2 ** 28) malformed(a);
            b = bytes[p++]!;
            x += (b & 127) * scale;
            scale *= 128;
          } while (b >= 128);
          if (x >= 2 ** 33) malformed(a);
          t = x % 2;
          const zigzag = (x - t) / 2;
          v = (v + ((zigzag >>> 1) ^ -(zigzag & 1))) | 0;
        }
        const from = i;
        if ((t & 1) === 0) i++;
        else {
          let c = bytes[p++]!;
          if (c >= 128) {
            let x = c & 127;
            let scale = 128;
            let b: number;
            do {
              if (p >= to || scale > 2 ** 28) malformed(a);
              b = bytes[p++]!;
              x += (b & 127) * scale;
              scale *= 128;
            } while (b >= 128);
            c = x;
          }
          i += c + 2;
          if (i > n) malformed(a);
        }
        if (v > previous || v < 0) throw new NotAStaircase();
        previous = v;
        if (merged[i - 1]! < v) env.lengthen(a, from, i, v);
      }
      if (p !== to) malformed(a);
    } else {
      values ??= new Int32Array(top);
      ends ??= new Int32Array(top);
      const runs = decodeRuns(bytes, duration.offsets[a]!, to, duration.encoding[a]!, values, ends);
      for (let r = 0, from = 0; r < runs; r++) {
        const v = values[r]!;
        const end = ends[r]!;
        if (v > previous || v < 0) throw new NotAStaircase();
        previous = v;
        if (merged[end - 1]! < v) env.lengthen(a, from, end, v);
        from = end;
      }
    }
  }
  return { duration: merged, start: env.start, owner: env.owner };
}

function malformed(a: number): never {
  throw new RangeError(`malformed curve array: the durations of curve ${a}`);
}

/**
 * Longitudinal accumulated work duration: the activities' AWD arrays summed per training day
 * (`day[a]` numbers activity a's day; days need not be contiguous or ordered), then per level the
 * highest day and the given quantiles over the days (engine/curves/awd.ts).
 */
export function dailyAwdPercentiles(awd: EncodedArrays, day: Int32Array, quantiles: Float64Array): AwdPercentiles {
  const byDay = new Map<number, Int32Array[]>();
  decodeArrays(awd).forEach((a, i) => {
    const list = byDay.get(day[i]!);
    if (list) list.push(a);
    else byDay.set(day[i]!, [a]);
  });
  return awdPercentiles([...byDay.values()].map(sumAwd), [...quantiles]);
}
