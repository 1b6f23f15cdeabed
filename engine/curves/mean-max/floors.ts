/**
 * Floors and ceilings, for the longitudinal code (engine/curves/longitudinal.ts): it passes the
 * running best over earlier activities as a floor, and a duration's answer is reported only when its
 * mean is strictly above it.
 *
 * Invariants, and why they keep the answer exact:
 *
 * - A cut's bar (`cutBars`) is a sum no reportable window of the cut's own starts reaches: the lowest
 *   floor of cuts 0..j (a window of cut j's starts counts for each of them), times d, shaded down by
 *   2⁻⁵⁰ so that a real sum at or below it has a mean at or below that floor. A block whose bound is
 *   at or below the bar holds nothing that could be reported, so ruling it out (settle.ts) changes
 *   no reported value; what is reported is still the earliest best, found as without a floor.
 * - A ceiling (`ceilings`) is at least every window sum of d from the cut on: as in settle.ts's
 *   scanCoarse, Q[k] = P[k] − min(x)·k never falls, so the windows of starts s..s+G−1 sum at most
 *   Q[e] − Q[s] + min(x)·d for any e ≥ s+G−1+d (clamped to n), and never more than d·max(x) (+ tol).
 *   A duration at which no cut's ceiling is above its bar has nothing to report, and is skipped
 *   (`reachable`); so is one cut at such a duration. The blocks due then wake at the next duration
 *   searched, so longitudinal curves search only the few durations an activity can improve.
 * - A floor's slowest growth (`floorRates`) bounds how fast a block can close its gap on the bar,
 *   for the floor sleep of sleep.ts: from duration k to a later one j the bar grows by at least
 *   (bars[j] − bars[k]) / (d_j − d_k) per duration, up to the next duration without a floor (where
 *   the block wakes).
 */

import { f64, i32, type Kernel } from './state.ts';

/** Durations from this on get the block-maxima ceiling (ceilings); shorter ones only d·max(x), the blocks would cost more than they save. */
const CEILING_FROM = 16;

/**
 * Per cut j, the bar its own starts must pass: the lowest floor of cuts 0..j (a window of cut j's
 * starts counts for each of them; with nested floors, as a longitudinal running best has, that is
 * floor j itself), as sums: any real sum ≤ bars[j][k] has a mean ≤ that floor (so it is never
 * reported); −∞ where a floor is NaN, and for the durations longer than the cut's suffix (whose
 * floors are not read).
 */
export function cutBars(floor: Float64Array[], durations: Int32Array, cuts: Int32Array, n: number): Float64Array[] {
  const bars: Float64Array[] = [];
  let K = durations.length;
  for (let j = 0; j < floor.length; j++) {
    while (K > 0 && durations[K - 1]! > n - cuts[j]!) K--; // (longer durations have no window from this cut)
    const f = floor[j]!;
    const before = bars[j - 1];
    const own = f64(`bars${j}`, durations.length).fill(-Infinity);
    for (let k = 0; k < K; k++) {
      const v = f[k]!;
      const F = v * durations[k]!; // within a rounding of f·d: shade it down below f·d
      let bar = v !== v ? -Infinity : F - F !== 0 ? F : F - Math.abs(F) * 2 ** -50 - 1e-300;
      if (before && before[k]! < bar) bar = before[k]!; // (monotone in the floor: the lowest sum is the lowest floor's)
      own[k] = bar;
    }
    bars.push(own);
  }
  return bars;
}

/** Whether some cut has a window of the duration and a bar below its ceiling. */
export function reachable(cuts: Int32Array, bars: Float64Array[], ceil: Float64Array[], k: number, hi: number): boolean {
  for (let j = 0; j < cuts.length; j++) if (cuts[j]! <= hi && ceil[j]![k]! > bars[j]![k]!) return true;
  return false;
}

/**
 * Per cut j and duration index k, a ceiling on every window sum of durations[k] starting at ≥ cuts[j],
 * cheap enough to skip the durations at which a cut's bar cannot be reached (the module comment):
 * with G a power of two about d/8, and e rounded up to a multiple of G, the durations [2^h, 2^(h+1))
 * need 9 such maxima over n/G starts (one pass from the end gives every cut's: the blocks from the
 * one holding its first start on): 64·n/2^h, about 16·n in all, within about d/4 samples' worth of
 * the best sum (+ tol), and never above d·max(x), which alone is the ceiling below CEILING_FROM.
 */
export function ceilings(t: Kernel, durations: Int32Array, cuts: Int32Array): Float64Array[] {
  const { n, P, minX, maxX, tol } = t;
  const m = cuts.length;
  const out = Array.from(cuts, (_, j) => f64(`ceiling${j}`, durations.length));
  const top = new Float64Array(m);
  let key = -1; // the (G, E) of `top`: consecutive durations share it
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    const flat = maxX * d + tol; // (no window sums more than d·max x)
    if (d < CEILING_FROM) {
      for (let j = 0; j < m; j++) out[j]![k] = flat;
      continue;
    }
    const G = 1 << (31 - Math.clz32(d) - 3);
    const E = Math.ceil((d + G - 1) / G) * G;
    if (E * 32 + Math.clz32(G) !== key) {
      key = E * 32 + Math.clz32(G);
      let best = -Infinity;
      let s = Math.floor((n - d) / G) * G; // the last block holding a start of a window of d
      for (let j = m - 1; j >= 0; j--) {
        const first = Math.floor(cuts[j]! / G) * G;
        for (; s >= first; s -= G) {
          const e = s + E < n ? s + E : n;
          const q = P[e]! - P[s]! - minX * (e - s);
          if (q > best) best = q;
        }
        top[j] = best;
      }
    }
    for (let j = 0; j < m; j++) {
      const c = top[j]! + minX * d + tol;
      out[j]![k] = c < flat ? c : flat;
    }
  }
  return out;
}

/**
 * Per duration index k, 1 / (cap − g_k) (shaded down), where g_k = min over later durations j up
 * to the next one without a floor of (bars[j] − bars[k]) / (d_j − d_k): the floor's slowest growth
 * from k on, read off the lower convex hull of those points (d_j, bars[j]) (monotone chain from the
 * right: O(K)); 0 when nothing can close a gap on the floor; NaN where the floor is not finite.
 * end[k]: that next duration without a floor (n + 1 when none): a block asleep on the floor wakes
 * by then. Durations longer than `longest` (no window) are left out: they bound nothing.
 */
export function floorRates(
  bars: Float64Array,
  durations: Int32Array,
  t: Kernel,
  longest: number,
  j: number,
): { inv: Float64Array; end: Int32Array } {
  const K = bars.length;
  const inv = f64(`inv${j}`, K).fill(Number.NaN);
  const end = i32(`end${j}`, K).fill(t.n + 1);
  const hull = i32('hull', K);
  let top = -1;
  let gone = t.n + 1; // the first later duration without a floor
  const { cap, tol } = t;
  let k = K - 1;
  while (k >= 0 && durations[k]! > longest) k--;
  for (; k >= 0; k--) {
    const b = bars[k]!;
    end[k] = gone;
    if (b === -Infinity) {
      gone = durations[k]!;
      top = -1; // the hull restarts: nothing past here bounds an earlier growth
      continue;
    }
    if (!Number.isFinite(b)) continue; // (+∞ never binds a later growth)
    // The slope from k to the hull's points, popping those a later one undercuts from here.
    const dk = durations[k]!;
    let g = Infinity;
    if (top >= 0) {
      let h = hull[top]!;
      g = (bars[h]! - b) / (durations[h]! - dk);
      while (top >= 1) {
        h = hull[top - 1]!;
        const g0 = (bars[h]! - b) / (durations[h]! - dk);
        if (g < g0) break;
        g = g0;
        top--;
      }
    }
    const rate = cap - (g - Math.abs(g) * 2 ** -40) + tol;
    inv[k] = !(rate > 0) ? 0 : (1 - 2 ** -40) / rate;
    hull[++top] = k;
  }
  return { inv, end };
}
