/**
 * Mean-max, exact and fast: the plain prefix-sum scan's answers (engine/curves/mean-max-plain.ts), bit for
 * bit, found by branch and bound instead of by visiting every window (DESIGN.md §4).
 *
 * Same arithmetic as the plain scan: P[0] = 0, P[i+1] = P[i] + x[i] (sequential Float64 additions
 * over the whole series, whatever `from` is); a window's sum is P[i+d] − P[i]; the best is the
 * greatest sum, the EARLIEST start among equal ones, and the mean is that sum / d. Every sum compared
 * here is computed that way, so the same window gives the identical value.
 *
 * The starts are cut into blocks of B = 32, each two leaves of L = 16. Durations are taken in
 * ascending order; for each one:
 *
 * 1. Lower bound: the previous duration's best window grown to the new length (to the right, to the
 *    left, centred; clamped into the series). It contains the old window, so the best sum falls by
 *    at most Δd·min(x) from one duration to the next.
 * 2. An awake block that its bound (step 3) does not rule out, and that a start p samples away
 *    beats at this duration and at the next ones (exact repetition, mean-max-repeats.ts), sleeps
 *    until that may end, unsettled.
 * 3. Every other awake block is settled: by its bound, or, when the bound cannot rule it out, by
 *    its leaves' bounds, and by summing the windows of each leaf those cannot rule out exactly as
 *    the plain scan does (greater wins; equal wins only at an earlier start). The bound: for any
 *    slope a and Q[k] = P[k] − a·k, P[i+d] − P[i] = a·d + Q[i+d] − Q[i], so for every start i of
 *    the block (or leaf) [s, s+w):
 *
 *        P[i+d] − P[i]  ≤  a·d + max Q[s+d .. s+d+w) − min Q[s .. s+w)
 *
 *    With a near the best mean Q is nearly flat, and the bound is the block's best sum plus Q's
 *    wobble inside two blocks. Q's leaf minima and sliding maxima (van Herk / Gil-Werman; a
 *    block's are two leaves') cost O(n) to build, so they are rebuilt only when the best mean has
 *    drifted away from a (a stale a loosens the bound, it never breaks it): a handful of times per
 *    series. Durations below BOUND_FROM, where the bound is loose, sum every awake leaf.
 *    Periodic series (ERG intervals, square waves, sines): Q swings by the signal inside two
 *    blocks, so the bound rules out nothing. When a duration sums over n/TEMPLATE_SUMMED windows,
 *    the series is searched once for a period p (mean-max-template.ts); if it has one, Q also
 *    loses a periodic term Z[k mod p] (a the series' mean), and the bound gains the template's
 *    best window over the block's phases, G[d mod p][s mod p]: Q is then the noise, and windows
 *    one period apart are told apart by it. The identity holds for any Z: a poor template only
 *    loosens the bound.
 * 4. A block whose best sum (or bound) is g below the running best then sleeps: from d to d + Δ a
 *    window gains the Δ samples it grows into, at most Δ·cap plus those samples' excess over the
 *    cap (cap: the 99th percentile of the samples, when well below max(x); the excess summed over
 *    the block's growth from prefix sums of max(x − cap, 0)), while the best gains at least
 *    Δ·min(x) (step 1), so it stays below while Δ·(cap − min(x)) + excess < g. A glitch of 21,733 W
 *    thus shortens the sleep only of the blocks whose windows grow into it. Blocks wait in one
 *    list per wake-up duration, so a duration touches only the blocks that wake at it: far from
 *    the best they sleep for hundreds of durations, near it they wake every duration or so.
 *    With a template (step 3) a block also sleeps while its bound at each later duration, grown
 *    by Q's steepest rise per duration, stays below the best window grown to that duration
 *    (periodicSleep): windows one period apart then sleep for as long as the noise cannot close
 *    their gap, not the signal's swing.
 *
 * Why exact. Let i* be the earliest window with the greatest sum at d. The running best is always a
 * real window, so its sum never exceeds sum(i*). i*'s block is not asleep: a sleep proves its sums
 * below the best (or, for a block after the best's start, at most equal to a window starting
 * earlier), or no greater than a window p earlier, or smaller once rounded than one p later,
 * which i* is not. Its bounds are ≥ sum(i*) ≥ the running best, and an equal bound does not rule
 * out a block holding a start earlier than the running best's; so its leaf is summed, i* wins
 * (greater, or equal and earlier) and nothing replaces it. Floating point: `tol`, added to every
 * bound and taken off every gap, covers the rounding of a·k, Q, the bound and the sums (below
 * 20·n·max|x|·2⁻⁵³; tol = 3·n·max|x|·2⁻⁴⁴). When every sample is an integer and n·max|x| < 2⁴², a
 * is rounded to a multiple of 1/256 and every quantity above is exact: tol = 0, and ties (constant
 * or all-zero power, long equal stretches) are settled exactly.
 *
 * Scanned in full instead (the plain scan, earliest start on ties): series shorter than SMALL,
 * durations more than SPARSE apart (e.g. the 19 default durations: nearly every block would be
 * awake and the bound rebuilt each time), and, unless a shift is in use, spells after a duration
 * that summed most windows anyway; with a shift, spells after COST_SPAN durations whose search
 * cost more than the plain scan would have (a window summed, WAKE_COST per block woken). A full
 * scan of long windows still skips the blocks that a bound needing no tables rules out
 * (scanCoarse: the slope a = min(x), for which Q never falls).
 *
 * `floor` (the longitudinal running best) raises the bar: nothing whose mean is not above it is
 * reported, so blocks below it are ruled out and sleep as well, on the floor's own growth between
 * durations instead of min(x), up to the next duration without a floor (floorRates); a block sleeps
 * for the longer of its two sleeps, so a floor only ever adds sleep. "After" curves share one
 * pass: the suffixes from the cuts are nested, so the best from cut j is the better of the best
 * from cut j+1 and the windows starting in [cuts[j], cuts[j+1]), and only those are searched
 * (with their own sleeping blocks), from the last cut backwards. With a floor, a ceiling per cut
 * and duration (ceilings: block-aligned maxima of Q = P − min(x)·k, O(n) per octave) skips every
 * duration at which no window from the cut can pass its bar; the blocks due then wake at the next
 * duration searched, so longitudinal curves search only the few durations an activity can improve.
 *
 * NaN in the samples is NOT handled: callers zero-fill gaps first (a pause is zero work, DESIGN.md
 * §4). Should the prefix sums be non-finite all the same (NaN, ±Infinity, overflow), every duration
 * is scanned in full, which still gives the plain scan's answer.
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
 *   over all durations) and wakes each block
 *   at most once, at O(1) cost, or O(log n) when it starts a dominated sleep (a search in
 *   mean-max-repeats.ts), plus one step per duration a periodicSleep adds; setup is O(n) per slope
 *   and per shift, and a template O(n + PROBES·1024 + p²) once (mean-max-template.ts).
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
 * - Nothing for other series. A ride, glitches, noise, ramps: the cost is the blocks near the best
 *   at each duration (their bound is not below it, a few per duration) plus the far ones' wake-ups
 *   (bench/engine-mean-max.ts: a 4 h ride sums under 1 % of the plain scan's windows). Float
 *   series that repeat exactly (0.1, whose increments are constant between powers of two of P)
 *   are ruled out by the shift p earlier, and by the one M·p later only where the later sums are
 *   greater by more than a double's spacing: fast (bench), not proven. Periodic series with noise
 *   (ERG intervals, a noisy square wave) were the hardest, n²/p, until the template (step 3) and
 *   periodicSleep: now 4–5× faster at 4 h, and the noisy square wave grows from 1 h to 24 h about
 *   as n^1.5. The hardest series found is now a float sine whose period is a whole number of
 *   samples: at every duration that is a multiple of the period all n windows have the same sum
 *   up to rounding, and near those durations nearly so, so the exact answer (which rounding
 *   decides) needs about n²/p sums (bench growth rows, 1 h to 48 h). The shorter the period the
 *   dearer: at 4 h, period 100 takes about 28 ms, 37 about 100 ms, and 7 would take more than the
 *   plain scan (170 ms against 120 ms: a block woken at every duration for every phase) but for
 *   the cost check that hands such a search over to full scans (WAKE_COST, COST_SPAN).
 */

import { dominatedUntil, findShifts, type Shift } from './mean-max-repeats.ts';
import { findTemplate, NO_TEMPLATE, type Template } from './mean-max-template.ts';

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
 * The kernel's working arrays, reused from one series to the next (a thread runs one kernel at a
 * time, and none of them outlives the call): a longitudinal curve runs it once per activity, and
 * fresh arrays cost more in allocation and collection than the pruned search itself. Up to
 * SCRATCH_MAX entries each; longer series allocate.
 */
const scratch = new Map<string, Float64Array | Int32Array>();
const SCRATCH_MAX = 1 << 17;
function f64(key: string, length: number): Float64Array {
  if (length > SCRATCH_MAX) return new Float64Array(length);
  let a = scratch.get(key);
  if (!(a instanceof Float64Array) || a.length < length) scratch.set(key, (a = new Float64Array(Math.min(SCRATCH_MAX, Math.max(length, 2 * (a?.length ?? 0))))));
  return a.subarray(0, length);
}
function i32(key: string, length: number): Int32Array {
  if (length > SCRATCH_MAX) return new Int32Array(length);
  let a = scratch.get(key);
  if (!(a instanceof Int32Array) || a.length < length) scratch.set(key, (a = new Int32Array(Math.min(SCRATCH_MAX, Math.max(length, 2 * (a?.length ?? 0))))));
  return a.subarray(0, length);
}

/** Starts per block (the unit that sleeps and wakes): B = 2^LOG_B. */
const LOG_B = 5;
const B = 1 << LOG_B;
/** A woken block is bounded again per leaf of L = 2^LOG_L starts before any window is summed (B = 2L). */
const LOG_L = 4;
const L = 1 << LOG_L;
/** Shorter durations sum every awake leaf: the bound is loose against short windows. */
const BOUND_FROM = 48;
/** Durations further apart than this (or than this on average over the next 16) are scanned in full: nearly every block would be awake. */
const SPARSE = 16;
/** When a duration sums most windows all the same, the next this many are scanned in full (doubling while it recurs). */
const FULL_SPELL = 64;
/** Durations at least this long, scanned in full, skip blocks by a bound needing no tables (scanCoarse). */
const COARSE_FROM = 32;
/** Durations from this on get the block-maxima ceiling (ceilings); shorter ones only d·max(x), the blocks would cost more than they save. */
const CEILING_FROM = 16;
/** Shorter series are scanned in full: n²/2 sums cost less than setting up the search. */
const SMALL = 128;
/** Rebuild the bound when the best mean is further than this × mean |x| (× d / 512 beyond 512 s) from its slope. */
const DRIFT = 0.2;
/** A periodic template is looked for (once) when a bounded duration sums more than 1/this of its windows. */
const TEMPLATE_SUMMED = 8;
/** periodicSleep is tried this many times, then kept only while at least a quarter of its calls lengthen a sleep. */
const SLEEP_TRIAL = 4096;
/** The cap on a sample's gain per duration (sleeping blocks): this quantile of the samples, the excess above it counted where it is. */
const CAP_QUANTILE = 0.99;
/**
 * With a shift in use, what a woken block costs beside a window summed (a bound, a dominance query,
 * a sleep; measured: 20–40 windows' worth), and how many searched durations are weighed at once
 * against the plain scan's windows (COST_SPAN).
 */
const WAKE_COST = 32;
const COST_SPAN = 64;

/**
 * Exact mean-max at `durations` (Int32Array, strictly ascending, each ≥ 1; RangeError otherwise).
 * Output identical to meanMaxPlain: best[k] = (P[i+d] − P[i]) / d from the same prefix sums and
 * start[k] the earliest start among tied best windows; a duration longer than the series (or than
 * the part from `from`) → NaN / -1. Samples must not contain NaN: zero-fill gaps first.
 */
export function meanMax(samples: Float64Array, durations: Int32Array, best: Float64Array, start: Int32Array, options: MeanMaxOptions = {}): void {
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
export function meanMaxAfter(samples: Float64Array, durations: Int32Array, cuts: Int32Array, options: { floor?: Float64Array | Float64Array[] } = {}): { best: Float64Array[]; start: Int32Array[] } {
  for (let j = 0; j < cuts.length; j++) {
    const c = cuts[j]!;
    if (c < 0 || c > samples.length || (j > 0 && c < cuts[j - 1]!)) throw new RangeError(`cuts must be ascending, within 0..${samples.length}`);
  }
  const best = Array.from(cuts, () => new Float64Array(durations.length));
  const start = Array.from(cuts, () => new Int32Array(durations.length));
  const floor = options.floor;
  if (Array.isArray(floor) && floor.length !== cuts.length) throw new RangeError('a floor per cut, or one for all');
  run(samples, durations, cuts, floor === undefined || Array.isArray(floor) ? floor : cuts.length ? Array.from(cuts, () => floor) : undefined, best, start);
  return { best, start };
}

/** A series' prefix sums, the bound for the current slope, and the running best of the search. */
interface Kernel {
  n: number;
  P: Float64Array;
  /** W[k] = max Q[k .. k+B) ∩ [0, n], Q[k] = P[k] − a·k; WL the same over L positions. */
  W: Float64Array;
  WL: Float64Array;
  /** minQ[b] = min Q[bB .. bB+B) ∩ [0, n]; minQL the same per leaf of L. */
  minQ: Float64Array;
  minQL: Float64Array;
  a: number;
  /** The periodic term of Q (mean-max-template.ts): Q[k] = P[k] − a·k − Z[k mod p]; NO_TEMPLATE: none. */
  tpl: Template;
  /** With a template: the most Q rises in one step (how much a block's bound can grow per duration beyond its template term). */
  qUp: number;
  /** periodicSleep's calls, and those that slept no longer: it is given up on where it mostly fails. */
  sleepCalls: number;
  sleepFails: number;
  built: boolean;
  /** Added to every bound and taken off every gap: the rounding error's bound (0 when exact). */
  tol: number;
  exact: boolean;
  minX: number;
  maxX: number;
  meanAbs: number;
  /** The most a window's sum gains per duration, but for the excess over it (cap): the cap, or max x. */
  cap: number;
  /** Prefix sums of the samples' excess over the cap (null when there is no cap), and their rounding's bound. */
  excess: Float64Array | null;
  excessTol: number;
  /** The shifts at which the series repeats exactly (mean-max-repeats.ts); usually none. */
  shifts: Shift[];
  /** At least the spacing of doubles near any window sum (0 when sums are exact): real sums further apart round apart. */
  ulp: number;
  /** The running best: a real window's sum and start (−∞ / −1 before the first). */
  bs: number;
  bi: number;
  /** Windows summed by `wake` for the current duration, and blocks woken. */
  summed: number;
  wakes: number;
}

/** The blocks of each cut's own starts, asleep in one list per wake-up duration. */
interface Sleepers {
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
   * Per cut, made when the cut is first searched (floorRates): the same on its floor, per duration
   * index (NaN where the floor cannot be slept on), and the first later duration without a floor
   * (a block asleep on the floor wakes by then).
   */
  rates: ({ inv: Float64Array; end: Int32Array } | undefined)[];
}

function run(samples: Float64Array, durations: Int32Array, cuts: Int32Array, floor: Float64Array[] | undefined, bestOut: Float64Array[], startOut: Int32Array[]): void {
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    if (!(d >= 1) || (k > 0 && d <= durations[k - 1]!)) throw new RangeError('durations must be strictly ascending, each ≥ 1');
  }
  if (floor && floor.some((f) => f.length !== durations.length)) throw new RangeError('floor needs one value per duration');
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

  let prevD = 0;
  let fullUntil = 0; // durations up to this are scanned in full: pruning has not been paying
  let spell = FULL_SPELL;
  let askedTemplate = false;
  // With a shift: the search's cost against the plain scan's over the last durations searched.
  let costed = 0;
  let searchCost = 0;
  let plainCost = 0;
  let costSpell = FULL_SPELL;
  for (let k = 0; k < durations.length; k++) {
    const d = durations[k]!;
    const hi = n - d; // the last start of a window of d
    if (ceil && !reachable(cuts, bars!, ceil, k, hi)) {
      prevD = d; // (not a gap that would call for a full scan: the blocks due wake at the next duration computed)
      continue;
    }
    // In full: no prefix sums to trust, a short series, durations too far apart for sleeping blocks
    // to pay, or a spell after pruning failed.
    const full = !finite || n < SMALL || d - prevD > SPARSE || !dense(durations, k) || d <= fullUntil;
    if (!full && !q) {
      capGains(t, samples);
      q = sleepers(t, cuts);
      t.shifts = findShifts(t.P, B);
    }
    const bound = !full && d >= BOUND_FROM;
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
        if (c <= last && finite && d >= COARSE_FROM && d > fullUntil) {
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
    // Many windows summed: a periodic signal may be why (mean-max-template.ts); asked once, and
    // with a template the slope's tables are rebuilt at the next duration.
    if (bound && !askedTemplate && TEMPLATE_SUMMED * t.summed > n) {
      askedTemplate = true;
      const tpl = findTemplate(samples, t.exact, B, L);
      if (tpl) {
        t.tpl = tpl;
        t.built = false;
        prevD = d;
        continue;
      }
    }
    // With a shift, ties up to rounding at every duration (a float sine of a short period) can make
    // the search dearer than the plain scan though dominance rules much out: when COST_SPAN
    // durations cost more than their windows would, scan in full for a spell, longer each time.
    if (bound && t.shifts.length) {
      searchCost += t.summed + WAKE_COST * t.wakes;
      plainCost += windows;
      if (++costed === COST_SPAN) {
        if (searchCost > plainCost) {
          fullUntil = d + costSpell;
          costSpell *= 2;
        }
        costed = searchCost = plainCost = 0;
      }
    }
    // Most windows summed after all (ties up to rounding): scan in full for a while, longer each
    // time it happens again. Not with shifts, whose dominance a full scan would forgo (above).
    if (bound && 2 * t.summed > windows && !t.shifts.length) {
      fullUntil = d + spell;
      spell *= 2;
    } else if (bound) spell = FULL_SPELL;
    prevD = d;
  }
}

/** Whether some cut has a window of the duration and a bar below its ceiling. */
function reachable(cuts: Int32Array, bars: Float64Array[], ceil: Float64Array[], k: number, hi: number): boolean {
  for (let j = 0; j < cuts.length; j++) if (cuts[j]! <= hi && ceil[j]![k]! > bars[j]![k]!) return true;
  return false;
}

/**
 * Per cut j and duration index k, a ceiling on every window sum of durations[k] starting at ≥ cuts[j],
 * cheap enough to skip the durations at which a cut's bar cannot be reached. As in scanCoarse,
 * Q[k] = P[k] − min(x)·k never falls, so the windows of starts s..s+G−1 sum at most
 * Q[e] − Q[s] + min(x)·d for any e ≥ s+G−1+d (clamped to n): with G a power of two about d/8,
 * and e rounded up to a multiple of G, the durations [2^h, 2^(h+1)) need 9 such maxima
 * over n/G starts (one pass from the end gives every cut's: the blocks from the one holding its
 * first start on): 64·n/2^h, about 16·n in all, within about d/4 samples' worth of the best sum
 * (+ tol), and never above d·max(x), which alone is the ceiling below CEILING_FROM.
 */
function ceilings(t: Kernel, durations: Int32Array, cuts: Int32Array): Float64Array[] {
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

/** Whether durations k, k+1, … go on for a while no further than SPARSE apart on average (blocks sleep between them). */
function dense(durations: Int32Array, k: number): boolean {
  const ahead = Math.min(k + 16, durations.length - 1);
  return durations[ahead]! - durations[k]! <= (ahead - k) * SPARSE;
}

/** The prefix sums, exactly as the plain scan builds them, and the facts the bounds need. */
function prepare(samples: Float64Array): Kernel {
  const n = samples.length;
  const P = f64('P', n + 1);
  P[0] = 0;
  let integer = true;
  let minX = Infinity;
  let maxX = -Infinity;
  let sumAbs = 0;
  let maxAbsP = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    P[i + 1] = P[i]! + x;
    if (Math.abs(P[i + 1]!) > maxAbsP) maxAbsP = Math.abs(P[i + 1]!);
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    sumAbs += Math.abs(x);
    if (integer && !Number.isInteger(x)) integer = false;
  }
  const maxAbs = n > 0 ? Math.max(-minX, maxX) : 0;
  const exact = integer && n * maxAbs < 2 ** 42;
  const tol = exact ? 0 : 3 * n * maxAbs * 2 ** -44 + 1e-300;
  return {
    n,
    P,
    W: new Float64Array(0), // (these made at the first rebuild)
    WL: new Float64Array(0),
    minQ: new Float64Array(0),
    minQL: new Float64Array(0),
    a: 0,
    tpl: NO_TEMPLATE,
    qUp: Infinity,
    sleepCalls: 0,
    sleepFails: 0,
    built: false,
    tol,
    exact,
    minX,
    maxX,
    meanAbs: n > 0 ? sumAbs / n : 0,
    cap: maxX, // (capGains sets these when the search starts)
    excess: null,
    excessTol: 0,
    shifts: [],
    ulp: exact ? 0 : 2 * maxAbsP * 2 ** -52 + 2 ** -1074,
    bs: -Infinity,
    bi: -1,
    summed: 0,
    wakes: 0,
  };
}

/**
 * The cap on what a window gains per duration while its block sleeps: the CAP_QUANTILE quantile of
 * about 512 of the samples, when it is well below max x, and prefix sums of the samples' excess
 * over it (rounding bounded by excessTol; exact with integer samples).
 */
function capGains(t: Kernel, samples: Float64Array): void {
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

/**
 * Per cut j, the bar its own starts must pass: the lowest floor of cuts 0..j (a window of cut j's
 * starts counts for each of them; with nested floors, as a longitudinal running best has, that is
 * floor j itself), as sums: any real sum ≤ bars[j][k] has a mean ≤ that floor (so it is never
 * reported); −∞ where a floor is NaN, and for the durations longer than the cut's suffix (whose
 * floors are not read).
 */
function cutBars(floor: Float64Array[], durations: Int32Array, cuts: Int32Array, n: number): Float64Array[] {
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

/** Every block of each cut's own starts, waking at the first duration. */
function sleepers(t: Kernel, cuts: Int32Array): Sleepers {
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
  // min(x): step 1 of the module comment); on the floor, cap − the floor's slowest growth.
  const rate = t.cap - t.minX + t.tol;
  return { head, next, drained: new Int32Array(m), nb, inv: rate > 0 ? (1 - 2 ** -40) / rate : 0, rates: Array.from(cuts, () => undefined) };
}

/**
 * Per duration index k, 1 / (cap − g_k) (shaded down), where g_k = min over later durations j up
 * to the next one without a floor of (bars[j] − bars[k]) / (d_j − d_k): the floor's slowest growth
 * from k on, read off the lower convex hull of those points (d_j, bars[j]) (monotone chain from the
 * right: O(K)); 0 when nothing can close a gap on the floor; NaN where the floor is not finite.
 * end[k]: that next duration without a floor (n + 1 when none): a block asleep on the floor wakes
 * by then. Durations longer than `longest` (no window) are left out: they bound nothing.
 */
function floorRates(bars: Float64Array, durations: Int32Array, t: Kernel, longest: number, j: number): { inv: Float64Array; end: Int32Array } {
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

/** Offers window i to the running best: greater, or equal and earlier, wins. */
function offer(t: Kernel, d: number, i: number): void {
  const s = t.P[i + d]! - t.P[i]!;
  if (s > t.bs || (s === t.bs && i < t.bi)) {
    t.bs = s;
    t.bi = i;
  }
}

/** The lower bound: the previous duration's best window at `p` grown to d (right, left, centred), clamped to starts lo..hi. */
function extend(t: Kernel, d: number, prevD: number, p: number, lo: number, hi: number): void {
  const grow = d - prevD;
  offer(t, d, Math.min(Math.max(p, lo), hi));
  offer(t, d, Math.min(Math.max(p - grow, lo), hi));
  if (grow > 2) offer(t, d, Math.min(Math.max(p - (grow >> 1), lo), hi));
}

/** Rebuilds Q's block minima and sliding maxima (per block and per leaf) for a slope near `mean`, when the slope in use has drifted too far from it. */
function retune(t: Kernel, mean: number, d: number): void {
  // With a template the slope is the series' own mean, once: Q is then the noise's running sum (mean-max-template.ts).
  if (t.built && t.tpl.p > 1) return;
  const target = t.tpl.p > 1 ? t.P[t.n]! / t.n : Math.min(Math.max(mean, t.minX), t.maxX);
  if (t.built && Math.abs(target - t.a) <= DRIFT * t.meanAbs * Math.max(1, d / 512)) return;
  const a = t.exact ? Math.round(target * 256) / 256 : target;
  const { n, P } = t;
  if (!t.built) {
    t.W = f64('W', n + 1);
    t.WL = f64('WL', n + 1);
    t.minQ = f64('minQ', (n >> LOG_B) + 1);
    t.minQL = f64('minQL', (n >> LOG_L) + 1);
  }
  const { W, WL, minQ, minQL } = t;
  const { p, Z } = t.tpl;
  // Q itself first (in W, overwritten below), then WL by van Herk / Gil-Werman: the suffix maximum
  // from k inside k's aligned leaf (and the leaf's minimum), then the prefix maximum up to k+L−1
  // inside the next one; a block's from two leaves'.
  let up = 0;
  for (let k = 0, φ = 0; k <= n; k++) {
    W[k] = P[k]! - a * k - Z[φ]!;
    if (k > 0 && W[k]! - W[k - 1]! > up) up = W[k]! - W[k - 1]!;
    if (++φ === p) φ = 0;
  }
  t.qUp = p > 1 ? up : Infinity;
  for (let s = 0, l = 0; s <= n; s += L, l++) {
    let hi = -Infinity;
    let lo = Infinity;
    for (let k = Math.min(s + L - 1, n); k >= s; k--) {
      const q = W[k]!;
      if (q > hi) hi = q;
      if (q < lo) lo = q;
      WL[k] = hi;
    }
    minQL[l] = lo;
  }
  let hi = -Infinity;
  for (let e = L; e < n + L; e++) {
    if ((e & (L - 1)) === 0) hi = -Infinity;
    if (e <= n) {
      const q = W[e]!;
      if (q > hi) hi = q;
    } // (past n: the window is cut at n)
    if (hi > WL[e - L + 1]!) WL[e - L + 1] = hi;
  }
  for (let k = 0; k <= n - L; k++) W[k] = WL[k + L]! > WL[k]! ? WL[k + L]! : WL[k]!;
  for (let k = Math.max(0, n - L + 1); k <= n; k++) W[k] = WL[k]!;
  for (let b = 0; b < minQ.length; b++) minQ[b] = 2 * b + 1 < minQL.length && minQL[2 * b + 1]! < minQL[2 * b]! ? minQL[2 * b + 1]! : minQL[2 * b]!;
  t.a = a;
  t.built = true;
}

/**
 * Settles every block of cut j due by duration d (its lists since the last call) over the cut's own
 * starts lo..last (those beyond `last` hold no window of d: the block is done), then puts each back
 * to sleep for as long as it cannot reach the bar: the running best, or the floor's `bar` when
 * higher (a block whose bound is below it cannot be reported), or for as long as a shift rules it out.
 */
function wake(t: Kernel, q: Sleepers, j: number, d: number, lo: number, last: number, bar: number, barInv: number, barEnd: number, bound: boolean): void {
  const { n, P, W, minQ, WL, minQL, tol, shifts } = t;
  const { head, next } = q;
  const floorKnown = barInv === barInv; // (not NaN)
  const base = j * (n + 2);
  const links = j * q.nb;
  const ad = t.a * d + tol;
  // The template's term: G[d mod p][s mod p] (all 0 without one).
  const { p, columns, GB, GL, blockPhase, leafPhase } = t.tpl;
  const dp = d % p;
  const row = dp * columns;
  const repeats = shifts.length > 0;
  const inv = q.inv;
  let bs = t.bs;
  let bi = t.bi;
  let summed = 0;
  let wakes = 0;
  for (let w = q.drained[j]! + 1; w <= d; w++) {
    let b = head[base + w]!;
    head[base + w] = -1;
    while (b >= 0) {
      const after = next[links + b]!;
      const s = b << LOG_B;
      const i0 = s > lo ? s : lo;
      const i1 = s + B - 1 < last ? s + B - 1 : last;
      if (i0 <= i1) {
        wakes++;
        // `top`: the block's best sum, or a bound on it; where the block's bound does not rule it
        // out, a shift may (it sleeps until that ends); else each leaf's bound, and where that
        // does not either, the leaf's windows summed.
        let top = bound ? ad + (p === 1 ? 0 : GB[row + blockPhase[b]!]!) + W[s + d]! - minQ[b]! : Infinity;
        const open = top > bar && (top > bs || (top === bs && i0 < bi));
        let wakeAt = repeats && open ? dominatedUntil(shifts, i0, i1, d, lo, n, t.ulp) : d;
        if (wakeAt === d) {
          if (open) {
            top = -Infinity;
            for (let ls = (i0 >> LOG_L) << LOG_L; ls <= i1; ls += L) {
              const l0 = ls > i0 ? ls : i0;
              const l1 = ls + L - 1 < i1 ? ls + L - 1 : i1;
              let leaf = bound ? ad + (p === 1 ? 0 : GL[row + leafPhase[ls >> LOG_L]!]!) + WL[ls + d]! - minQL[ls >> LOG_L]! : Infinity;
              if (leaf > bar && (leaf > bs || (leaf === bs && l0 < bi))) {
                summed += l1 - l0 + 1;
                leaf = P[l0 + d]! - P[l0]!;
                for (let i = l0 + 1; i <= l1; i++) {
                  const sum = P[i + d]! - P[i]!;
                  if (sum > leaf) leaf = sum;
                }
                if (leaf > bs || (leaf === bs && l0 < bi)) {
                  let i = l0;
                  while (P[i + d]! - P[i]! !== leaf) i++; // the leaf's earliest best
                  if (leaf > bs || i < bi) {
                    bs = leaf;
                    bi = i;
                  }
                }
              }
              if (leaf > top) top = leaf;
            }
          }
          // Asleep for as many durations as the block cannot reach the best — or may reach it,
          // when that is not enough: it starts after the best (the grown best keeps its earlier
          // start) — and as many as it cannot reach the floor, up to the first duration without one.
          const gap = bs - top - tol;
          wakeAt = gap > 0 || (gap === 0 && i0 > bi) ? d + 1 + asleep(t, gap, i0 > bi, inv, s, d) : d + 1;
          if (p > 1 && bound && gap > 0 && bi >= 0 && (t.sleepCalls < SLEEP_TRIAL || 4 * t.sleepFails < 3 * t.sleepCalls)) wakeAt = periodicSleep(t, b, d, dp, bi, lo, wakeAt);
          const floorGap = bar - top - tol;
          if (floorKnown && floorGap >= 0) {
            const onFloor = Math.min(d + 1 + asleep(t, floorGap, true, barInv, s, d), barEnd);
            if (onFloor > wakeAt) wakeAt = onFloor;
          }
        }
        // Back to sleep while it still holds a start of a window of wakeAt; else it is done.
        if (i0 <= n - wakeAt) {
          next[links + b] = head[base + wakeAt]!;
          head[base + wakeAt] = b;
        }
      }
      b = after;
    }
  }
  q.drained[j] = d;
  t.bs = bs;
  t.bi = bi;
  t.summed += summed;
  t.wakes += wakes;
}

/**
 * With a template, the block sleeps on from `wakeAt` while its bound at each later duration e = d + δ
 * stays below a real window of e, so below the best then: bi's window grown to the right, or to the
 * left (ending where it ends at d), whichever sums more (two prefix-sum differences). The block's
 * bound at e is the one of step 3 with Q's maxima over its ends raised by δ times Q's steepest
 * rise (they move δ samples on), so the block sleeps through e while
 *
 *     a·e + G[e mod p][s mod p] + W[s+d] − minQ[b] + tol + δ·qUp  <  that window's sum,
 *
 * each δ on its own (the durations before `wakeAt` are covered already): one step per duration
 * slept instead of a wake-up. Blocks of starts one period from the best grow alike but for the
 * noise, and sleep about gap / qUp durations rather than gap / (cap − min x).
 */
function periodicSleep(t: Kernel, b: number, d: number, dp: number, bi: number, lo: number, wakeAt: number): number {
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

/**
 * How many durations after d the block at s can sleep while its windows stay below a bar `gap`
 * above its best sum (or reach it at most, when `reach`), when the gap closes by at most 1/inv per
 * duration but for the excess over the cap: the largest Δ with Δ/inv + excess < gap, the excess
 * summed over the samples the block's windows grow into by then, s+d .. s+B−1+d+Δ (n: forever).
 * Called with gap > 0, or gap = 0 and reach. (Small: the hot path stays inlined.)
 */
function asleep(t: Kernel, gap: number, reach: boolean, inv: number, s: number, d: number): number {
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

/**
 * A scan over starts lo..hi that skips the blocks a bound needing no tables rules out: with x ≥ min x,
 * Q[k] = P[k] − min(x)·k never falls, so every window of a block's starts i0..i1 sums at most
 * Q[i1+d] − Q[i0] + min(x)·d = P[i1+d] − P[i0] − min(x)·(i1 − i0): the block's span of d+B−1
 * samples, less its B−1 smallest possible. Good against long windows, none against short ones.
 */
function scanCoarse(t: Kernel, d: number, lo: number, hi: number, bar: number): void {
  const { P, minX, tol } = t;
  let bs = t.bs;
  let bi = t.bi;
  for (let s = (lo >> LOG_B) << LOG_B; s <= hi; s += B) {
    const i0 = s > lo ? s : lo;
    const i1 = s + B - 1 < hi ? s + B - 1 : hi;
    const top = P[i1 + d]! - P[i0]! - minX * (i1 - i0) + tol;
    if (top <= bar || top < bs || (top === bs && !(i0 < bi))) continue;
    for (let i = i0; i <= i1; i++) {
      const sum = P[i + d]! - P[i]!;
      if (sum > bs || (sum === bs && i < bi)) {
        bs = sum;
        bi = i;
      }
    }
  }
  t.bs = bs;
  t.bi = bi;
}

/**
 * The plain scan over starts lo..hi, every start earlier than the running best's (the later
 * suffix's, or none): an equal sum wins until the first win, a greater one after it.
 */
function scanAll(t: Kernel, d: number, lo: number, hi: number): void {
  const P = t.P;
  let bs = t.bs;
  let bi = t.bi;
  let i = lo;
  if (bi >= 0) {
    for (; i <= hi; i++) {
      const s = P[i + d]! - P[i]!;
      if (s >= bs) {
        bs = s;
        bi = i++;
        break;
      }
    }
  }
  for (; i <= hi; i++) {
    const s = P[i + d]! - P[i]!;
    if (s > bs) {
      bs = s;
      bi = i;
    }
  }
  t.bs = bs;
  t.bi = bi;
}
