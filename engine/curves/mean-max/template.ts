/**
 * A periodic template for the mean-max kernel's block bound (bound.ts beside this file).
 *
 * The kernel bounds a block's windows with Q[k] = P[k] − a·k: P[i+d] − P[i] = a·d + Q[i+d] − Q[i].
 * On a periodic signal (ERG intervals, a square wave, a sine) Q swings by the signal's amplitude
 * times half a period inside any two blocks, far more than the few watt-seconds of noise that
 * separate windows one period apart, so no block is ruled out and the search sums nearly every
 * window. Subtract a periodic term as well: for ANY array Z of p values and Zk = Z[k mod p],
 *
 *     Q[k] = P[k] − a·k − Zk   gives   P[i+d] − P[i] = a·d + (Z[(i+d) mod p] − Z[i mod p]) + Q[i+d] − Q[i]
 *
 * so over a block of starts s..s+B−1 the sums are at most
 *
 *     a·d + G[d mod p][s mod p] + max Q[s+d .. s+d+B) − min Q[s .. s+B),
 *     G[r][φ] = max over u < B of Z[(φ+u+r) mod p] − Z[(φ+u) mod p]
 *
 * (a table per width, for blocks and for leaves, of p rows; G[r][φ] is needed only at the phases
 * φ that blocks and leaves start at, the multiples of gcd(p, leaf), so only those are kept when
 * that gcd is 4 or more). This holds whatever Z is; it is
 * tight when Zk follows the signal's periodic part: Z is the running sum of the mean sample at
 * each phase less their mean, so Q is what is left, the noise's running sum. The bound then
 * separates windows one period apart by their noise, and the pruning works as on a ride.
 *
 * Exact arithmetic (integer samples, the kernel's `exact`): Z is rounded to multiples of 1/256
 * like the slope a, so Q and G are exact as well. Otherwise their rounding is within the kernel's
 * `tol` (|Z| ≤ p·max|x| ≤ n·max|x|).
 *
 * The period: the shift p ≤ MAX_PERIOD (and ≤ n/4) with the least mean squared difference
 * x[k+p] − x[k] over PROBES positions, when that is below RATIO of shift 1's (a period's jumps
 * make shift 1's large; noise alone makes both alike, and then no template is made); the smallest
 * p within 25 % of that least, or within 1 % of shift 1's (the period rather than its multiples).
 * About PROBES · MAX_PERIOD operations, and the tables: the kernel asks only when its search is
 * failing.
 */

export interface Template {
  /** The period (1: no template). */
  p: number;
  /** Z[φ] for φ < p. */
  Z: Float64Array;
  /** Columns per row of GB and GL: the phases leaves and blocks can start at (p, or p / gcd(p, leaf) when that gcd is 4 or more). */
  columns: number;
  /** GB[r·columns + c] = G[r][φ] over blocks of `block` starts, for the phase φ of column c; GL over leaves of `leaf`. */
  GB: Float64Array;
  GL: Float64Array;
  /** The column of each block's and each leaf's phase (start mod p): a table read instead of a division per bound. */
  blockPhase: Int32Array;
  leafPhase: Int32Array;
}

/** No periodic term: Q = P − a·k, every G 0. */
export const NO_TEMPLATE: Template = {
  p: 1,
  columns: 1,
  Z: new Float64Array(1),
  GB: new Float64Array(1),
  GL: new Float64Array(1),
  blockPhase: new Int32Array(0),
  leafPhase: new Int32Array(0),
};

/** Periods searched: p ≤ MAX_PERIOD (tables of p² doubles at most, 2 × 8 MiB; usually p²/4 or less). */
const MAX_PERIOD = 1024;
/** Positions at which each shift's differences are taken. */
const PROBES = 512;
/** A period is used when its mean squared difference is below this fraction of shift 1's. */
const RATIO = 0.1;

/** The template of a periodic series, or undefined when it has no period worth one. `leaf` divides `block`; both powers of two. */
export function findTemplate(samples: Float64Array, exact: boolean, block: number, leaf: number): Template | undefined {
  const p = findPeriod(samples);
  if (p < 2) return undefined;
  const n = samples.length;
  const mean = new Float64Array(p);
  const count = new Float64Array(p);
  for (let k = 0, φ = 0; k < n; k++) {
    mean[φ] = mean[φ]! + samples[k]!;
    count[φ] = count[φ]! + 1;
    if (++φ === p) φ = 0;
  }
  let all = 0;
  for (let φ = 0; φ < p; φ++) all += mean[φ] = mean[φ]! / count[φ]!;
  all /= p;
  const Z = new Float64Array(p);
  let z = 0;
  for (let φ = 0; φ < p; φ++) {
    Z[φ] = exact ? Math.round(z * 256) / 256 : z;
    z += mean[φ]! - all;
  }
  const g = gcd(p, leaf);
  const step = g >= 4 ? g : 1; // the phases leaves (and blocks) start at are multiples of g
  const phases = (width: number) => Int32Array.from({ length: Math.floor(n / width) + 1 }, (_, b) => ((b * width) % p) / step);
  return { p, Z, columns: p / step, ...tables(Z, block, leaf, step), blockPhase: phases(block), leafPhase: phases(leaf) };
}

/**
 * G over blocks and leaves (module comment), for every r and the phases φ that are multiples of
 * `step` (column φ / step): with step ≥ 4 each value directly (leaf values each), otherwise every
 * phase by doubling (about 5 passes over p + block).
 */
function tables(Z: Float64Array, block: number, leaf: number, step: number): { GB: Float64Array; GL: Float64Array } {
  const p = Z.length;
  const C = p / step;
  const GB = new Float64Array(p * C);
  const GL = new Float64Array(p * C);
  const Zx = new Float64Array(2 * p + block); // Z repeated: Zx[k] = Z[k mod p]
  for (let k = 0; k < Zx.length; k++) Zx[k] = Z[k % p]!;
  if (step > 1) {
    for (let r = 0; r < p; r++) {
      const row = r * C;
      for (let φ = 0; φ < p; φ += step) {
        let m = -Infinity;
        for (let u = φ; u < φ + leaf; u++) {
          const v = Zx[u + r]! - Zx[u]!;
          if (v > m) m = v;
        }
        GL[row + φ / step] = m;
      }
      for (let φ = 0; φ < p; φ += step) {
        let m = -Infinity; // a block's leaves: phases φ, φ + leaf, … (multiples of step as well)
        for (let h = 0; h < block; h += leaf) {
          const b = GL[row + ((φ + h) % p) / step]!;
          if (b > m) m = b;
        }
        GB[row + φ / step] = m;
      }
    }
    return { GB, GL };
  }
  const width = p + block; // g over φ .. φ + block − 1 for every φ < p, wrapped
  const g = new Float64Array(width);
  for (let r = 0; r < p; r++) {
    for (let φ = 0; φ < width; φ++) g[φ] = Zx[φ + r]! - Zx[φ]!;
    // Sliding maxima by doubling: after the pass of width w, g[φ] = max g[φ .. φ+w).
    for (let w = 1; w < leaf; w *= 2) doubleMax(g, w);
    const row = r * p;
    for (let φ = 0; φ < p; φ++) GL[row + φ] = g[φ]!;
    for (let w = leaf; w < block; w *= 2) doubleMax(g, w);
    for (let φ = 0; φ < p; φ++) GB[row + φ] = g[φ]!;
  }
  return { GB, GL };
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** g[φ] = max(g[φ], g[φ + w]) for every φ that has both, in place (φ ascending reads g[φ + w] before it changes). */
function doubleMax(g: Float64Array, w: number): void {
  for (let φ = 0, end = g.length - w; φ < end; φ++) {
    const a = g[φ]!;
    const b = g[φ + w]!;
    g[φ] = a > b ? a : b;
  }
}

/** The series' period by the least mean squared difference (module comment), or 0. */
function findPeriod(x: Float64Array): number {
  const n = x.length;
  const maxP = Math.min(MAX_PERIOD, Math.floor(n / 4));
  if (maxP < 2) return 0;
  const span = n - maxP; // probes at k < span, so k + p < n for every p
  const probes = Math.min(PROBES, span);
  const at = new Int32Array(probes);
  for (let j = 0; j < probes; j++) at[j] = Math.floor((j * span) / probes);
  const msd = new Float64Array(maxP + 1);
  // Shift 1 over every position (a period's few jumps must not fall between the probes), scaled to the probes' count.
  let one = 0;
  for (let k = 0; k + 1 < n; k++) {
    const v = x[k + 1]! - x[k]!;
    one += v * v;
  }
  msd[1] = (one * probes) / (n - 1);
  for (let p = 2; p <= maxP; p++) {
    let s = 0;
    for (let j = 0; j < probes; j++) {
      const k = at[j]!;
      const v = x[k + p]! - x[k]!;
      s += v * v;
    }
    msd[p] = s;
  }
  let least = 2;
  for (let p = 3; p <= maxP; p++) if (msd[p]! < msd[least]!) least = p;
  if (!(msd[least]! < RATIO * msd[1]!)) return 0;
  // (near rounding noise, as on a float sine, "within 25 %" is the noise's luck: within 1 % of shift 1's as well)
  const near = Math.max(1.25 * msd[least]!, 0.01 * msd[1]!);
  for (let p = 2; p < least; p++) if (msd[p]! <= near) return p;
  return least;
}
