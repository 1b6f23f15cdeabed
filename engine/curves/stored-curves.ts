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
import { decodeArrays, decodeRuns, encodedLength, runScratch, type EncodedArrays } from './curve-codec.ts';
import { awdPercentiles, sumAwd, type AwdPercentiles } from './awd.ts';
import type { LevelCurve } from './longitudinal.ts';
import { mergeValueIndexed } from './value-indexed.ts';

class NotAStaircase extends Error {}

export function mergeStoredLevels(duration: EncodedArrays, start: EncodedArrays): LevelCurve {
  const count = duration.encoding.length;
  if (start.encoding.length !== count) throw new RangeError(`mergeStoredLevels: ${count} duration curves, ${start.encoding.length} start curves`);
  try {
    return mergeStaircases(duration, start);
  } catch (err) {
    if (!(err instanceof NotAStaircase)) throw err;
    const d = decodeArrays(duration);
    const s = decodeArrays(start);
    return mergeValueIndexed(d.map((x, i) => ({ duration: x, start: s[i]! })));
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
  const merged = new Int32Array(top);
  const mergedStart = new Int32Array(top).fill(-1);
  const owner = new Int32Array(top).fill(-1);
  // Room for one activity's duration runs, and (decoded only when needed) its start runs.
  const values = new Int32Array(top);
  const ends = new Int32Array(top);
  const scratch = runScratch(top);
  for (let a = 0; a < count; a++) {
    const runs = decodeRuns(duration.bytes, duration.offsets[a]!, duration.offsets[a + 1]!, duration.encoding[a]!, values, ends);
    let startRuns = -1; // not decoded yet
    let s = 0; // the start run covering the levels being filled
    let previous = 0x7fffffff;
    let from = 0;
    for (let r = 0; r < runs; r++) {
      const v = values[r]!;
      const end = ends[r]!;
      if (v > previous || v < 0) throw new NotAStaircase();
      previous = v;
      if (merged[end - 1]! < v) {
        // The merge is below v on a suffix [k, end) of the run.
        let k = end - 1;
        while (k > from && merged[k - 1]! < v) k--;
        merged.fill(v, k, end);
        owner.fill(a, k, end);
        if (startRuns < 0) startRuns = decodeRuns(start.bytes, start.offsets[a]!, start.offsets[a + 1]!, start.encoding[a]!, scratch.values, scratch.ends);
        while (scratch.ends[s]! <= k) s++;
        for (let i = k; i < end; s++) {
          const stop = Math.min(end, scratch.ends[s]!);
          mergedStart.fill(scratch.values[s]!, i, stop);
          i = stop;
          if (stop === end) break;
        }
      }
      from = end;
    }
  }
  return { duration: merged, start: mergedStart, owner };
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
