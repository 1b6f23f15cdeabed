import type { Frame } from '../../engine/frames/frame.ts';
import { levelValue } from '../../engine/curves/levels.ts';

/** Level values k·step for k = K..1 (descending, API.md), as a DOUBLE column. */
export function descendingLevels(count: number, step: number): Float64Array {
  const out = new Float64Array(count);
  for (let r = 0; r < count; r++) out[r] = levelValue(count - r, step);
  return out;
}

/** A per-level array (index k−1) reversed so that row r is level K−r. */
export function descending<A extends Int32Array | Float64Array>(values: A): A {
  return values.slice().reverse() as A;
}

/** The AWD frame of one activity: the metric's level and `duration` (s) at or above it, descending by level. */
export function awdFrame(metric: string, awd: Int32Array, step: number): Frame {
  return {
    columns: [
      { name: metric, type: 'double', values: descendingLevels(awd.length, step) },
      { name: 'duration', type: 'int32', values: descending(awd) },
    ],
  };
}
