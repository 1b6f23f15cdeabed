/**
 * When a block may sleep (step 4 of mean-max.ts): how many durations a settled block can skip, and
 * the lists it waits in.
 *
 * Invariant: a block asleep until duration w holds, at every duration from the one it was settled at
 * up to w − 1, no window that is the earliest best (nor one above its cut's floor, for a floor sleep).
 *
 * Why, on the running best. Let top be the block's best sum at d (or a bound on it, bound.ts) and
 * gap = best − top − tol. From d to d + Δ each of its windows grows by Δ samples, so it gains at
 * most Δ·cap plus those samples' excess over the cap (cap: the CAP_QUANTILE quantile of the samples,
 * when well below max x; the excess summed from prefix sums of max(x − cap, 0), so a glitch of
 * 21,733 W shortens the sleep only of the blocks whose windows grow into it). The best window grown
 * by Δ (state.ts, `extend`) is a real window that gains at least Δ·min(x), and the running best at
 * d + Δ is at least that. So the block stays below the best while Δ·(cap − min x) + excess < gap
 * (`asleep`, `lessExcess`, `excessOnly`). With gap = 0 it may at most tie, which is enough when the
 * block starts after the best's start: the grown best keeps a start no later than the best's.
 *
 * On a floor (longitudinal curves, floors.ts): nothing whose mean is not above the floor is reported,
 * so a block below its cut's bar sleeps on the bar's own slowest growth between durations instead of
 * min x, up to the next duration without a floor; it sleeps for the longer of its two sleeps, so a
 * floor only ever adds sleep.
 *
 * With a template (`periodicSleep`): the block's bound at each later duration e, grown by Q's steepest
 * rise per duration, is compared with a real window of e (the best grown right or left); while it is
 * below, the block cannot hold the best at e. Windows one period apart then sleep for as long as the
 * noise cannot close their gap, not the signal's swing.
 *
 * Rates are shaded down by 2⁻⁴⁰ and tol is added to them, so a step count rounded up by the
 * arithmetic never oversleeps. Blocks wait in one list per wake-up duration (`Sleepers`), so a
 * duration touches only the blocks that wake at it: far from the best they sleep for hundreds of
 * durations, near it they wake every duration or so.
 */

import { SMALL } from './policy.ts';
import { f64, GEOMETRY, i32, type Kernel } from './state.ts';

const { B, LOG_B } = GEOMETRY; // (own constants: state.ts, GEOMETRY)

/** The cap on a sample's gain per duration (sleeping blocks): this quantile of the samples, the excess above it counted where it is. */
const CAP_QUANTILE = 0.99;
/** periodicSleep is tried this many times, then kept only while at least a quarter of its calls lengthen a sleep. */
const SLEEP_TRIAL = 4096;

/** The blocks of each cut's own starts, asleep in one list per wake-up duration. */
export interface Sleepers {
  /** head[j·(n+2) + w]: the first block of cut j waking at duration w, −1 for none. */
  head: Int32Array;
  /** next[j·nb + b]: the block after b in its list. */
  next: Int32Array;
  /** drained[j]: the lists of cut j are emptied up to this duration. */
  drained: Int32Array;
  nb: number;
  /** 1 / the fastest a block can close a gap on the running best, per duration (shaded down); 0: never. */
  inv: number;
  /**
   * Per cut, made when the cut is first searched (floors.ts, floorRates): the same on its floor, per
   * duration index (NaN where the floor cannot be slept on), and the first later duration without a
   * floor (a block asleep on the floor wakes by then).
   */
  rates: ({ inv: Float64Array; end: Int32Array } | undefined)[];
}

/**
 * The cap on what a window gains per duration while its block sleeps: the CAP_QUANTILE quantile of
 * about 512 of the samples, when it is well below max x, and prefix sums of the samples' excess
 * over it (rounding bounded by excessTol; exact with integer samples).
 */
export function capGains(t: Kernel, samples: Float64Array): void {
  const { n, minX, maxX } = t;
  if (n < SMALL || !Number.isFinite(maxX - minX)) return;
  const stride = Math.max(1, Math.floor(n / 512));
  const sample = new Float64Array(Math.ceil(n / stride));
  for (let i = 0, j = 0; i < n; i += stride) sample[j++] = samples[i]!;
  sample.sort();
  const c = sample[Math.floor(CAP_QUANTILE * (sample.length - 1))]!;
  if (!(c > minX && c - minX < 0.8 * (maxX - minX))) return;
  const excess = f64('excess', n + 1);
  excess[0] = 0;
  for (let i = 0; i < n; i++) {
    const e = samples[i]! - c;
    excess[i + 1] = excess[i]! + (e > 0 ? e : 0);
  }
  t.cap = c;
  t.excess = excess;
  t.excessTol = t.exact ? 0 : n * (excess[n]! + Math.max(-minX, maxX)) * 2 ** -50;
}

/** Every block of each cut's own starts, waking at the first duration. */
export function sleepers(t: Kernel, cuts: Int32Array): Sleepers {
  const { n } = t;
  const nb = (n >> LOG_B) + 1;
  const m = cuts.length;
  const head = i32('head', m * (n + 2)).fill(-1);
  const next = i32('next', m * nb);
  for (let j = 0; j < m; j++) {
    const end = j + 1 < m ? cuts[j + 1]! : n; // this cut's own starts: cuts[j] .. end-1
    if (cuts[j]! >= end) continue;
    for (let b = (end - 1) >> LOG_B; b >= cuts[j]! >> LOG_B; b--) {
      next[j * nb + b] = head[j * (n + 2) + 1]!;
      head[j * (n + 2) + 1] = b;
    }
  }
  // How fast a block can close its gap, per duration: on the best, cap − min(x) (a window gains
  // at most the cap per duration, and the excess over it where it is; the grown best at least
  // min(x)); on the floor, cap − the floor's slowest growth (floors.ts).
  const rate = t.cap - t.minX + t.tol;
  return {
    head,
    next,
    drained: new Int32Array(m),
    nb,
    inv: rate > 0 ? (1 - 2 ** -40) / rate : 0,
    rates: Array.from(cuts, () => undefined),
  };
}

/**
 * How many durations after d the block at s can sleep while its windows stay below a bar `gap`
 * above its best sum (or reach it at most, when `reach`), when the gap closes by at most 1/inv per
 * duration but for the excess over the cap: the largest Δ with Δ/inv + excess < gap, the excess
 * summed over the samples the block's windows grow into by then, s+d .. s+B−1+d+Δ (n: forever).
 * Called with gap > 0, or gap = 0 and reach. (Small: the hot path stays inlined.)
 */
export function asleep(t: Kernel, gap: number, reach: boolean, inv: number, s: number, d: number): number {
  const n = t.n;
  if (inv === 0) return t.excess ? excessOnly(t, gap, reach, s, d) : n; // the bar grows at least as fast as the cap
  const steps = gap * inv;
  let k = steps >= n ? n : steps | 0;
  if (k === steps && !reach) k--; // strictly below the bar: Δ·rate < gap
  if (k > 0 && t.excess) k = lessExcess(t, k, gap, reach, inv, s, d);
  return k > 0 ? k : 0;
}

/** The k steps of `asleep`, fewer when the samples grown into by then exceed the cap. */
function lessExcess(t: Kernel, k: number, gap: number, reach: boolean, inv: number, s: number, d: number): number {
  const E = t.excess!;
  const e = (E[Math.min(t.n, s + B - 1 + d + k)]! - E[s + d]!) * (1 + 2 ** -50) + t.excessTol;
  if (!(e > 0)) return k;
  const g = gap - e;
  if (!(g > 0 || (g === 0 && reach))) return 0;
  const steps = g * inv; // fewer steps: no more excess than over the k first
  let k2 = steps | 0;
  if (k2 === steps && !reach) k2--;
  return k2 < k ? k2 : k;
}

/** When only the excess over the cap can close the gap: the largest k whose excess stays below it (halving: the excess grows with k). */
function excessOnly(t: Kernel, gap: number, reach: boolean, s: number, d: number): number {
  const E = t.excess!;
  const n = t.n;
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const k = (lo + hi + 1) >> 1;
    const e = (E[Math.min(n, s + B - 1 + d + k)]! - E[s + d]!) * (1 + 2 ** -50) + t.excessTol;
    if (e < gap || (e === gap && reach)) lo = k;
    else hi = k - 1;
  }
  return lo;
}

/** Whether periodicSleep is still worth a call: always for its first SLEEP_TRIAL calls, then while at least a quarter of them lengthen a sleep. */
export function periodicSleepPays(t: Kernel): boolean {
  return t.sleepCalls < SLEEP_TRIAL || 4 * t.sleepFails < 3 * t.sleepCalls;
}

/**
 * With a template, the block sleeps on from `wakeAt` while its bound at each later duration e = d + δ
 * stays below a real window of e, so below the best then: bi's window grown to the right, or to the
 * left (ending where it ends at d), whichever sums more (two prefix-sum differences). The block's
 * bound at e is the one of bound.ts with Q's maxima over its ends raised by δ times Q's steepest
 * rise (they move δ samples on), so the block sleeps through e while
 *
 *     a·e + G[e mod p][s mod p] + W[s+d] − minQ[b] + tol + δ·qUp  <  that window's sum,
 *
 * each δ on its own (the durations before `wakeAt` are covered already): one step per duration
 * slept instead of a wake-up. Blocks of starts one period from the best grow alike but for the
 * noise, and sleep about gap / qUp durations rather than gap / (cap − min x).
 */
export function periodicSleep(t: Kernel, b: number, d: number, dp: number, bi: number, lo: number, wakeAt: number): number {
  const { p, columns, GB, blockPhase } = t.tpl;
  const { n, P, a, qUp } = t;
  const here = t.W[(b << LOG_B) + d]! - t.minQ[b]! + t.tol;
  const phase = blockPhase[b]!;
  let δ = wakeAt - d;
  let r = dp + (δ < p ? δ : δ % p); // e mod p
  if (r >= p) r -= p;
  let g = r * columns + phase; // G[e mod p][the block's phase]
  const rows = p * columns;
  const p0 = P[bi]!;
  const pd = P[bi + d]!;
  const most = Math.min(n - d - bi, bi - lo); // both windows exist up to here; one of them past it
  for (; ; δ++) {
    const e = d + δ;
    let lower: number;
    if (δ <= most) {
      const right = P[bi + e]! - p0;
      const left = pd - P[bi - δ]!;
      lower = right > left ? right : left;
    } else if (bi + e <= n) lower = P[bi + e]! - p0;
    else if (bi - δ >= lo) lower = pd - P[bi - δ]!;
    else break;
    if (!(a * e + GB[g]! + here + δ * qUp < lower)) break;
    g += columns;
    if (g >= rows) g -= rows;
  }
  t.sleepCalls++;
  if (d + δ === wakeAt) t.sleepFails++;
  return d + δ;
}
