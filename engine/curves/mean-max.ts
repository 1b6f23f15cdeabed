/**
 * Mean-max, exact and fast: the plain prefix-sum scan's answers (engine/curves/mean-max-plain.ts), bit for
 * bit, found by branch and bound instead of by visiting every window (docs/architecture.md, "The
 * engine's algorithms").
 *
 * Same arithmetic as the plain scan: P[0] = 0, P[i+1] = P[i] + x[i] (sequential Float64 additions
 * over the whole series, whatever `from` is); a window's sum is P[i+d] − P[i]; the best is the
 * greatest sum, the EARLIEST start among equal ones, and the mean is that sum / d.
 *
 * The search. Starts are cut into blocks of B = 32, each two leaves of 16; durations are taken in
 * ascending order, and for each one:
 *
 * 1. The running best starts from the previous duration's best window grown to the new length.
 * 2. A block that a start p samples away beats, at this duration and the next ones (exact
 *    repetition), sleeps until that may end.
 * 3. Every other block due is settled: ruled out by its bound, or by its leaves' bounds, or its
 *    leaves' windows are summed exactly as the plain scan sums them.
 * 4. A settled block whose best (or bound) is below the running best, or below the floor, sleeps for
 *    as many durations as it cannot catch up.
 *
 * Why exact, in one sentence: the running best is always a real window, and the earliest best window
 * i* is always summed, because nothing that rules a block out or puts it to sleep can apply to i*'s.
 * Each claim, and the file that proves it (each opens with the invariant it keeps and why):
 *
 *   mean-max/state.ts     the running best is a real window, compared as the plain scan compares;
 *                         the grown best of step 1; the rounding bound `tol`, derived, and when the
 *                         arithmetic is exact (tol = 0); the shared state and scratch arrays
 *   mean-max/bound.ts     the block bound (step 3) is ≥ every window sum of the block, for any slope
 *                         and any periodic template
 *   mean-max/template.ts  the periodic template that makes the bound tight on periodic series
 *   mean-max/repeats.ts   a block beaten by a start p away (step 2), over ranges of durations
 *   mean-max/sleep.ts     a sleeping block holds no best window until it wakes (step 4)
 *   mean-max/floors.ts    floors, bars and ceilings of the longitudinal code rule out only what
 *                         cannot be reported
 *   mean-max/settle.ts    the proof that i* wins, the settling loop, and the full scans
 *   mean-max/policy.ts    when to search and when to scan in full (tuning only: both are exact)
 *
 * This file: the public entries and the loop over durations. "After" curves share one pass: the
 * suffixes from the cuts are nested, so the best from cut j is the better of the best from cut j+1
 * and the windows starting in [cuts[j], cuts[j+1]), and only those are searched (with their own
 * sleeping blocks), from the last cut backwards.
 *
 * NaN in the samples is NOT handled: callers zero-fill gaps first (a pause is zero work,
 * docs/architecture.md, "The engine's algorithms"). Should the prefix sums be non-finite all the
 * same (NaN, ±Infinity, overflow), every duration is scanned in full, which still gives the plain
 * scan's answer.
 *
 * Cost. Over every duration 1..n this is the maximum consecutive subsums problem (MCSP), which is
 * equivalent under subquadratic reductions to (min,+) convolution (Cygan, Mucha, Węgrzycki and
 * Włodarczyk, "On problems equivalent to (min,+)-convolution", ICALP 2017): an O(n^(2−ε)) exact
 * algorithm for every input would be one for (min,+) convolution, which is conjectured not to
 * exist. No such bound is claimed here. The o(n²) algorithms known for the general problem
 * (n²/2^Ω(√log n), through APSP) and the O(n^1.5)-type ones for bounded integers (additive
 * combinatorics) save less than their constant factors cost at any n a day of samples reaches.
 * 0/1 series are binary jumbled indexing, no easier. What is proven:
 *
 * - Any input: O(n²·(1 + log n / B)) time, O(n + p²) memory (p: a template's period, ≤ 1024).
 *   Each duration sums each window at most once (never more than the plain scan's n(n+1)/2 sums
 *   over all durations) and wakes each block at most once, at O(1) cost, or O(log n) when it starts
 *   a dominated sleep (repeats.ts), plus one step per duration a periodic sleep adds; setup is O(n)
 *   per slope and per shift, and a template O(n + PROBES·1024 + p²) once (template.ts).
 * - Exact repetition, with exact sums (integers, n·max|x| < 2⁴²): let p be a shift in use — 1
 *   whenever the increments P[k+1] − P[k] repeat from one sample to the next at all but n/8
 *   positions, or the period found by findShifts (p ≤ 4096) — and K the number of positions k with
 *   x[k+p] ≠ x[k]. Then H[k] = P[k+p] − P[k] takes K + 1 constant runs, and a block is
 *   dominated (step 2) at every duration at which its starts together with those p earlier lie in
 *   one run and so do their ends — by the starts p earlier when the ends' run is not higher, by
 *   those p later when it is — but for the blocks within p of their cut's first start and the
 *   durations within p + B of a block's last. That leaves O(n·(K+1)·(1 + p/B)) block-durations to
 *   settle, each in O(B); a dominated sleep ends where the ends reach a run's edge, so a block
 *   starts at most K + 1 of them, each O(log n + B): O(n·(K+1)·(p + B + log n)) in all.
 *   Constant, all-zero and step series: O(n log n); a series of exact period p (sawtooth, square
 *   wave, a sine sampled at a rational period): O(n·(p + log n)).
 * - Nothing for other series. On a ride the cost is the blocks near the best at each duration plus
 *   the far ones' wake-ups; float series that repeat exactly (0.1, whose increments are constant
 *   between powers of two of P) are ruled out by the shift p earlier, and by the one p later only
 *   where the later sums are greater by more than a double's spacing: fast, not proven. The hardest
 *   series found is a float sine whose period is a whole number of samples: at every duration that
 *   is a multiple of the period all n windows have the same sum up to rounding, so the exact answer
 *   (which rounding decides) needs about n²/p sums; for the shortest periods the cost check of
 *   policy.ts hands the search over to full scans. What each kind of series costs, measured, is in
 *   bench/README.md ("engine").
 */

import { retune } from './mean-max/bound.ts';
import { ceilings, cutBars, floorRates, reachable } from './mean-max/floors.ts';
import { SearchPolicy, SMALL } from './mean-max/policy.ts';
import { findShifts } from './mean-max/repeats.ts';
import { scanAll, scanCoarse, wake } from './mean-max/settle.ts';
import { capGains, type Sleepers, sleepers } from './mean-max/sleep.ts';
import { extend, GEOMETRY, prepare } from './mean-max/state.ts';
import { findTemplate } from './mean-max/template.ts';
import { checkStop } from '../stop.ts';

const { B, L } = GEOMETRY;

export interface MeanMaxOptions {
  /** Only windows whose start index is ≥ from count (windows still end inside the series). Default 0. */
  from?: number;
  /**
   * Per-duration lower bound (same length as durations): a duration's result is reported only when
   * its best mean is STRICTLY greater than floor[k]; otherwise best[k] = NaN, start[k] = -1. Used
   * for longitudinal curves from raw streams, where the running best over earlier activities
   * prunes windows. NaN floor = no bound.
   */
  floor?: Float64Array;
}

/**
 * Exact mean-max at `durations` (Int32Array, strictly ascending, each ≥ 1; RangeError otherwise).
 * Output identical to meanMaxPlain: best[k] = (P[i+d] − P[i]) / d from the same prefix sums and
 * start[k] the earliest start among tied best windows; a duration longer than the series (or than
 * the part from `from`) → NaN / -1. Samples must not contain NaN: zero-fill gaps first.
 */
export function meanMax(
  samples: Float64Array,
  durations: Int32Array,
  best: Float64Array,
  start: Int32Array,
  options: MeanMaxOptions = {},
): void {
  const from = options.from ?? 0;
  if (!Number.isInteger(from) || from < 0) throw new RangeError(`from must be an integer ≥ 0, got ${from}`);
  if (best.length < durations.length || start.length < durations.length) throw new RangeError('best and start need one entry per duration');
  run(samples, durations, Int32Array.of(Math.min(from, samples.length)), options.floor ? [options.floor] : undefined, [best], [start]);
}

/** Every duration 1..n: best[d-1], start[d-1]. */
export function meanMaxAll(samples: Float64Array): { best: Float64Array; start: Int32Array } {
  const n = samples.length;
  const durations = new Int32Array(n);
  for (let d = 1; d <= n; d++) durations[d - 1] = d;
  const best = new Float64Array(n);
  const start = new Int32Array(n);
  run(samples, durations, Int32Array.of(0), undefined, [best], [start]);
  return { best, start };
}

/**
 * "After X kJ" curves: for each cut c (start indexes, ascending, 0 ≤ c ≤ n), the mean-max over the
 * suffix samples[c..n) — windows starting at ≥ c — at every duration; a suffix shorter than d →
 * NaN/-1. Identical to meanMax(samples, durations, …, { from: cuts[j] }) for each j, in one pass
 * over the windows (see the module comment). `floor` as in MeanMaxOptions: one for every cut, or
 * one per cut (cut j's own starts must then pass the lowest floor of cuts 0..j).
 */
export function meanMaxAfter(
  samples: Float64Array,
  durations: Int32Array,
  cuts: Int32Array,
  options: { floor?: Float64Array | Float64Array[] } = {},
): { best: Float64Array[]; start: Int32Array[] } {
  for (let j = 0; j < cuts.length; j++) {
    const c = cuts[j]!;
    if (c < 0 || c > samples.length || (j > 0 && c < cuts[j - 1]!))
      throw new RangeError(`cuts must be ascending, within 0..${samples.length}`);
  }
  const best = Array.from(cuts, () => new Float64Array(durations.length));
  const start = Array.from(cuts, () => new Int32Array(durations.length));
  const floor = options.floor;
  if (Array.isArray(floor) && floor.length !== cuts.length) throw new RangeError('a floor per cut, or one for all');
  run(
    samples,
    durations,
    cuts,
    floor === undefined || Array.isArray(floor) ? floor : cuts.length ? Array.from(cuts, () => floor) : undefined,
    best,
    start,
  );
  return { best, start };
}

function run(
  samples: Float64Array,
  durations: Int32Array,
  cuts: Int32Array,
  floor: Float64Array[] | undefined,
  bestOut: Float64Array[],
  startOut: Int32Array[],
): void {
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    if (!(d >= 1) || (k > 0 && d <= durations[k - 1]!)) throw new RangeError('durations must be strictly ascending, each ≥ 1');
  }
  if (floor?.some((f) => f.length !== durations.length)) throw new RangeError('floor needs one value per duration');
  const t = prepare(samples);
  const n = t.n;
  const m = cuts.length;
  const bars = floor ? cutBars(floor, durations, cuts, n) : undefined;
  const finite = Number.isFinite(t.P[n]!); // a non-finite prefix sum stays non-finite: P[n] tells
  const ceil = bars && finite && n >= SMALL ? ceilings(t, durations, cuts) : undefined;
  let q: Sleepers | undefined; // made at the first duration that prunes
  const runSum = new Float64Array(m); // this duration's best per cut, read by the cut before it
  const runStart = new Int32Array(m);
  const lastStart = Int32Array.from(cuts); // the latest real best per cut, grown into the next lower bound
  for (let j = 0; j < m; j++) {
    bestOut[j]!.fill(Number.NaN, 0, durations.length); // (none, until a duration reports one)
    startOut[j]!.fill(-1, 0, durations.length);
  }

  const policy = new SearchPolicy(durations, n, finite);
  let prevD = 0;
  for (let k = 0; k < durations.length; k++) {
    checkStop(); // (a pool task given up stops here: ../stop.ts)
    const d = durations[k]!;
    const hi = n - d; // the last start of a window of d
    if (ceil && !reachable(cuts, bars!, ceil, k, hi)) {
      prevD = d; // (not a gap that would call for a full scan: the blocks due wake at the next duration computed)
      continue;
    }
    const full = policy.scansInFull(k, prevD);
    if (!full && !q) {
      capGains(t, samples);
      q = sleepers(t, cuts);
      t.shifts = findShifts(t.P, B);
    }
    const bound = !full && policy.bounds(d);
    if (bound && m > 0 && cuts[0]! <= hi) {
      t.bs = -Infinity;
      t.bi = -1;
      extend(t, d, prevD, lastStart[0]!, cuts[0]!, hi);
      retune(t, Math.max(t.bs, bars ? bars[0]![k]! : -Infinity) / d, d);
    }
    t.summed = 0;
    t.wakes = 0;
    let windows = 0;
    for (let j = m - 1; j >= 0; j--) {
      const c = cuts[j]!;
      if (c > hi || (ceil && ceil[j]![k]! <= bars![j]![k]!)) {
        // No window of d, or none from c above the bar (which is no higher than the floor of any
        // cut before: those windows cannot be reported there either). The blocks due wake at the
        // next duration computed.
        runSum[j] = -Infinity;
        runStart[j] = -1;
        continue; // (reported as none)
      }
      const last = j + 1 < m ? Math.min(cuts[j + 1]! - 1, hi) : hi; // this cut's own starts: c..last
      const bar = bars ? bars[j]![k]! : -Infinity;
      // The later suffix's best (exact over its starts when above the bar; -∞ when it has none).
      t.bs = j + 1 < m ? runSum[j + 1]! : -Infinity;
      t.bi = j + 1 < m ? runStart[j + 1]! : -1;
      if (full || !q) {
        if (c <= last && policy.coarse(d)) {
          extend(t, d, prevD, lastStart[j]!, c, hi);
          scanCoarse(t, d, c, last, bar);
        } else if (c <= last) scanAll(t, d, c, last);
      } else {
        extend(t, d, prevD, lastStart[j]!, c, hi);
        const rates = bars ? (q.rates[j] ??= floorRates(bars[j]!, durations, t, n - c, j)) : undefined;
        wake(t, q, j, d, c, last, bar, rates ? rates.inv[k]! : Number.NaN, rates ? rates.end[k]! : 0, bound);
      }
      windows += Math.max(0, last - c + 1);
      const bs = t.bs;
      const bi = t.bi;
      runSum[j] = bs;
      runStart[j] = bi;
      if (bi >= 0) lastStart[j] = bi;
      const f = floor ? floor[j]![k]! : Number.NaN;
      const shown = Number.isNaN(f) || (bi >= 0 && bs / d > f);
      bestOut[j]![k] = shown ? bs / d : Number.NaN;
      startOut[j]![k] = shown ? bi : -1;
    }
    // Many windows summed: a periodic signal may be why (template.ts); asked once, and with a
    // template the slope's tables are rebuilt at the next duration.
    if (bound && policy.asksTemplate(t.summed)) {
      const tpl = findTemplate(samples, t.exact, B, L);
      if (tpl) {
        t.tpl = tpl;
        t.built = false;
        prevD = d;
        continue;
      }
    }
    if (bound) policy.weigh(d, t.summed, t.wakes, windows, t.shifts.length > 0);
    prevD = d;
  }
}
