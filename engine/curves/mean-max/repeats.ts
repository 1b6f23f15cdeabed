/**
 * Exact repetition in a series, for the mean-max kernel (engine/curves/mean-max.ts; the sleep it gives a block: settle.ts): starts that
 * cannot be the best because a start `p` samples away is at least as good, at whole ranges of
 * durations at once.
 *
 * Let P be the kernel's prefix sums (sequential Float64 additions) and, for a shift p ≥ 1,
 * H[k] = P[k+p] − P[k] as a REAL number (the exact difference of two doubles). Then, in reals,
 *
 *     sum(i, d) − sum(i − p, d) = H[i − p + d] − H[i − p]
 *     sum(i + p, d) − sum(i, d) = H[i + d] − H[i]
 *
 * and the kernel's computed sums are those reals rounded once (fl(P[i+d] − P[i])), and rounding
 * is monotone. So at duration d start i is not the earliest best window when
 *
 *  - H[i − p + d] ≤ H[i − p] and start i − p is allowed (≥ the first start searched): the window p
 *    earlier is at least as good and earlier; or
 *  - H[i + d] > H[i] and the window at i + p fits (i + p + d ≤ n): the window p later is better.
 *
 * A shift is worth checking when H is constant over long stretches: H's runs are where the
 * effective increments P[k+1] − P[k] repeat with period p (p = 1: a constant stretch of samples,
 * including float constants such as 0.1, whose increments are constant between powers of two of
 * P; p > 1: a periodic signal). Comparisons use only differences that are exact: where
 * fl(P[k+p] − P[k]) is not the real difference, H[k] is treated as incomparable (+∞ as an end,
 * −∞ as a start). For a block of starts i0..i1, one range minimum or maximum of H over the starts
 * and one "first position past a threshold" search over the ends (a sparse table over chunks of
 * CHUNK positions) give the first duration at which the block may stop being dominated.
 */

/** Positions per chunk of the sparse tables (the "first past a threshold" search scans within one). */
const LOG_CHUNK = 4;
const CHUNK = 1 << LOG_CHUNK;
/** A shift is used when H changes at no more than this fraction of positions. */
const MAX_BREAKS = 1 / 8;
/** Periods searched for: p ≤ MAX_PERIOD (and ≤ n / 4). */
const MAX_PERIOD = 4096;
/** Length of the pattern whose next occurrence proposes a period. */
const PATTERN = 32;

/** H for one shift, with the tables its queries need. */
export interface Shift {
  p: number;
  /** H[k] for k = 0..n−p; +∞ where the difference is not exact. */
  hi: Float64Array;
  /** H[k] for k = 0..n−p; −∞ where the difference is not exact. */
  lo: Float64Array;
  /** hiMax[k] = max hi[k .. k+w), loMin[k] = min lo[k .. k+w) (w the kernel's block, cut at the end). */
  hiMax: Float64Array;
  loMin: Float64Array;
  /** Sparse tables over chunks: level j, chunk c at j·chunks + c: max of hi / min of lo over chunks c .. c+2^j. */
  hiTable: Float64Array;
  loTable: Float64Array;
  chunks: number;
  /** Last index of H (n − p). */
  last: number;
}

/**
 * The shifts worth checking for a series with prefix sums P (length n + 1): 1 when the effective
 * increments repeat from one sample to the next at all but n/8 positions, and the period p ≤ 4096
 * proposed by where a pattern of increments recurs, when it repeats as well. Empty for most
 * real series (then the kernel pays nothing for this).
 */
export function findShifts(P: Float64Array, width: number): Shift[] {
  const n = P.length - 1;
  if (n < 4 * PATTERN) return [];
  // The effective increments, NaN where P[k+1] − P[k] is not exact (NaN equals nothing).
  const inc = new Float64Array(n);
  for (let k = 0; k < n; k++) inc[k] = exactDifference(P[k + 1]!, P[k]!);
  const shifts: Shift[] = [];
  const limit = Math.floor(n * MAX_BREAKS);
  if (breaks(inc, 1, limit) <= limit) shifts.push(makeShift(P, 1, width));
  const p = period(inc, limit);
  if (p > 1) shifts.unshift(makeShift(P, p, width)); // the period first: it rules out the most
  return shifts;
}

/** The exact real a − b when fl(a − b) is exact (TwoSum error zero), else NaN. */
function exactDifference(a: number, b: number): number {
  const s = a - b;
  const v = s - a;
  const err = a - (s - v) + (-b - v);
  return err === 0 ? s : Number.NaN;
}

/** How many k have inc[k + p] ≠ inc[k] (stops counting past `limit`). */
function breaks(inc: Float64Array, p: number, limit: number): number {
  let count = 0;
  for (let k = 0; k + p < inc.length && count <= limit; k++) if (inc[k + p] !== inc[k]) count++;
  return count;
}

/**
 * A period p ≥ 2 at which the increments repeat (at all but `limit` positions), or 0: from three
 * probes, the distance to the next occurrence of a non-constant pattern of PATTERN increments.
 */
function period(inc: Float64Array, limit: number): number {
  const n = inc.length;
  const maxP = Math.min(MAX_PERIOD, Math.floor(n / 4));
  let best = 0;
  let bestBreaks = limit + 1;
  for (const f of [0.25, 0.5, 0.75]) {
    let q = Math.floor(n * f);
    // A pattern that is not constant (a constant one recurs at distance 1, covered by shift 1).
    while (q + PATTERN + maxP < n && inc[q] === inc[q + PATTERN - 1]) q += PATTERN;
    if (q + PATTERN + maxP >= n || inc[q] !== inc[q]) continue;
    for (let p = 2; p <= maxP; p++) {
      if (inc[q + p] !== inc[q]) continue;
      let k = 1;
      while (k < PATTERN && inc[q + p + k] === inc[q + k]) k++;
      if (k < PATTERN) continue;
      if (p !== best) {
        const b = breaks(inc, p, bestBreaks - 1);
        if (b < bestBreaks) {
          best = p;
          bestBreaks = b;
        }
      }
      break; // the first recurrence from this probe
    }
  }
  return bestBreaks <= limit ? best : 0;
}

function makeShift(P: Float64Array, p: number, width: number): Shift {
  const n = P.length - 1;
  const last = n - p;
  const hi = new Float64Array(last + 1);
  const lo = new Float64Array(last + 1);
  for (let k = 0; k <= last; k++) {
    const h = exactDifference(P[k + p]!, P[k]!);
    hi[k] = h === h ? h : Infinity;
    lo[k] = h === h ? h : -Infinity;
  }
  const chunks = (last >> LOG_CHUNK) + 1;
  let levels = 1;
  while (1 << levels <= chunks) levels++;
  const hiTable = new Float64Array(levels * chunks);
  const loTable = new Float64Array(levels * chunks);
  for (let c = 0; c < chunks; c++) {
    let mx = -Infinity;
    let mn = Infinity;
    for (let k = c << LOG_CHUNK, e = Math.min(last, k + CHUNK - 1); k <= e; k++) {
      if (hi[k]! > mx) mx = hi[k]!;
      if (lo[k]! < mn) mn = lo[k]!;
    }
    hiTable[c] = mx;
    loTable[c] = mn;
  }
  for (let j = 1; j < levels; j++) {
    const at = j * chunks;
    const below = at - chunks;
    const half = 1 << (j - 1);
    for (let c = 0; c + (1 << j) <= chunks; c++) {
      hiTable[at + c] = Math.max(hiTable[below + c]!, hiTable[below + c + half]!);
      loTable[at + c] = Math.min(loTable[below + c]!, loTable[below + c + half]!);
    }
  }
  // Window maxima and minima over `width` positions (van Herk / Gil-Werman: within aligned
  // groups of `width`, the suffix extreme from k, then the prefix extreme of the next group).
  const hiMax = new Float64Array(last + 1);
  const loMin = new Float64Array(last + 1);
  for (let g = 0; g <= last; g += width) {
    let mx = -Infinity;
    let mn = Infinity;
    for (let k = Math.min(g + width - 1, last); k >= g; k--) {
      if (hi[k]! > mx) mx = hi[k]!;
      if (lo[k]! < mn) mn = lo[k]!;
      hiMax[k] = mx;
      loMin[k] = mn;
    }
  }
  for (let g = width, mx = -Infinity, mn = Infinity; g < last + width; g++) {
    if (g % width === 0) [mx, mn] = [-Infinity, Infinity];
    if (g <= last) {
      if (hi[g]! > mx) mx = hi[g]!;
      if (lo[g]! < mn) mn = lo[g]!;
    }
    const k = g - width + 1; // the window k .. g (cut at last)
    if (mx > hiMax[k]!) hiMax[k] = mx;
    if (mn < loMin[k]!) loMin[k] = mn;
  }
  return { p, hi, lo, hiMax, loMin, hiTable, loTable, chunks, last };
}

/**
 * The first duration ≥ d at which some start of i0..i1 may be the best, as far as the shifts can
 * tell (d itself when none rules the block out at d; n + 1 when one does for good). `first` is the
 * first start searched; windows end at n.
 */
export function dominatedUntil(shifts: Shift[], i0: number, i1: number, d: number, first: number, n: number, ulp: number): number {
  for (const sh of shifts) {
    const p = sh.p;
    // By the starts p earlier: every end H[i − p + d'] ≤ min over the starts of H[i − p] (the
    // window minima over a block from i0 cover i0..i1: never a smaller bar than the true one).
    if (i0 - p >= first) {
      const t = sh.loMin[i0 - p]!;
      if (sh.hiMax[i0 - p + d]! <= t) {
        const k = firstAbove(sh, i0 - p + d, t);
        return k > sh.last ? n + 1 : k - i1 + p;
      }
    }
    // By the starts M·p later: every end H[i + tp + d'] > every start H[i + tp] (t < M) by more
    // than ulp / M, so the later window's real sum is greater by more than `ulp` (a bound on the
    // spacing of doubles as large as any window sum) and stays greater once rounded; while
    // i + M·p + d' ≤ n. With exact sums (ulp = 0), M = 1.
    const M = ulp === 0 ? 1 : Math.max(1, Math.floor(FLOAT_REACH / p));
    const reach = i1 + (M - 1) * p;
    if (reach + p + d <= n) {
      const t0 = M === 1 ? sh.hiMax[i0]! : rangeMax(sh, i0, reach);
      const m = ulp / M;
      const t = m === 0 ? t0 : t0 + m + (Math.abs(t0) + m) * 2 ** -51; // ≥ t0 + m, rounding and all
      if (sh.loMin[i0 + d]! > t && (M === 1 || minOver(sh, i0 + d, reach + d) > t)) {
        const k = firstAtMost(sh, i0 + d, t);
        return Math.min(k - reach, n - p - reach + 1);
      }
    }
  }
  return d;
}

/** With inexact sums, the later starts compared are up to this many samples later (M = this / p). */
const FLOAT_REACH = 64;

/** max hi over l..r (over whole chunks: never smaller). */
function rangeMax(sh: Shift, l: number, r: number): number {
  const c0 = l >> LOG_CHUNK;
  const c1 = r >> LOG_CHUNK;
  const j = 31 - Math.clz32(c1 - c0 + 1);
  const u = sh.hiTable[j * sh.chunks + c0]!;
  const v = sh.hiTable[j * sh.chunks + c1 - (1 << j) + 1]!;
  return u > v ? u : v;
}

/** min lo over l..r (over whole chunks: never larger). */
function minOver(sh: Shift, l: number, r: number): number {
  const c0 = l >> LOG_CHUNK;
  const c1 = Math.min(r, sh.last) >> LOG_CHUNK;
  const j = 31 - Math.clz32(c1 - c0 + 1);
  const u = sh.loTable[j * sh.chunks + c0]!;
  const v = sh.loTable[j * sh.chunks + c1 - (1 << j) + 1]!;
  return u < v ? u : v;
}

/** The first k ≥ q with hi[k] > t (last + 1 when none). */
function firstAbove(sh: Shift, q: number, t: number): number {
  const { hi, hiTable, chunks, last } = sh;
  if (q > last) return last + 1;
  const end = Math.min(last, ((q >> LOG_CHUNK) << LOG_CHUNK) + CHUNK - 1);
  for (let k = q; k <= end; k++) if (hi[k]! > t) return k;
  // Whole chunks from c on: double the stride while every chunk is ≤ t, then halve it down to the first that is not.
  let c = (q >> LOG_CHUNK) + 1;
  let j = 0;
  for (;;) {
    if (c >= chunks) return last + 1;
    while (c + (1 << j) > chunks) j--;
    if (hiTable[j * chunks + c]! > t) break;
    c += 1 << j++;
  }
  while (j > 0) if (hiTable[--j * chunks + c]! <= t) c += 1 << j;
  for (let k = c << LOG_CHUNK; ; k++) if (hi[k]! > t) return k;
}

/** The first k ≥ q with lo[k] ≤ t (last + 1 when none). */
function firstAtMost(sh: Shift, q: number, t: number): number {
  const { lo, loTable, chunks, last } = sh;
  if (q > last) return last + 1;
  const end = Math.min(last, ((q >> LOG_CHUNK) << LOG_CHUNK) + CHUNK - 1);
  for (let k = q; k <= end; k++) if (lo[k]! <= t) return k;
  let c = (q >> LOG_CHUNK) + 1;
  let j = 0;
  for (;;) {
    if (c >= chunks) return last + 1;
    while (c + (1 << j) > chunks) j--;
    if (loTable[j * chunks + c]! <= t) break;
    c += 1 << j++;
  }
  while (j > 0) if (loTable[--j * chunks + c]! > t) c += 1 << j;
  for (let k = c << LOG_CHUNK; ; k++) if (lo[k]! <= t) return k;
}
