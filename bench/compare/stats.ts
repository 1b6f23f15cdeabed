import { prng } from '../../test/helpers/prng.ts';

/**
 * The statistics of `npm run bench -- compare`: is side B (this tree) faster or slower than side A
 * (the reference), beyond what the machine's noise explains?
 *
 * Samples are taken in rounds, A and B adjacent in each (A B, then B A: the order alternates), so
 * a round's two samples share the machine's state of that moment. The estimate is the ratio of B
 * to A as the median of the rounds' ratios, exp(median ln(bᵢ / aᵢ)): a load spike that slows one
 * round slows both of its samples and leaves the ratio nearly alone, and the median ignores the
 * rounds a spike split. Its 95 % interval is a percentile bootstrap over rounds (rounds drawn with
 * replacement, RESAMPLES times, from a seeded generator so that one set of samples always gives
 * one interval); when the rounds were taken in several forks (fresh processes), a two-level one:
 * forks drawn with replacement, then rounds within each, because each process carries a bias of
 * its own (its JIT's choices: ±3–6 % on some kernel series, of either sign from run to run) that
 * its rounds alone cannot show. A row's verdict:
 *
 * - `slower`: the whole interval lies above 1 and the estimate is at least `threshold` above it;
 * - `faster`: the whole interval lies below 1 and the estimate is at least `threshold` below it;
 * - `no change`: otherwise (the interval holds 1, or the change is smaller than `threshold`).
 *
 * `threshold` is the smallest change reported as one; it guards against the small steady bias two
 * processes can have between them (code laid out at other addresses), which enough rounds would
 * otherwise call significant.
 */

export const RESAMPLES = 2000;
export const CONFIDENCE = 0.95;

export type Verdict = 'faster' | 'slower' | 'no change';

export interface Comparison {
  /** Rounds compared (pairs of samples). */
  rounds: number;
  /** Median of A's and of B's samples. */
  medianA: number;
  medianB: number;
  /** B / A: the median of the rounds' ratios. Below 1, B is faster. */
  ratio: number;
  /** The 95 % bootstrap interval of `ratio`. */
  low: number;
  high: number;
  verdict: Verdict;
}

export interface CompareOptions {
  /** Smallest relative change called a change (0.02: 2 %). Default 0. */
  threshold?: number;
  resamples?: number;
  confidence?: number;
  seed?: number;
  /**
   * The fork (process) of each pair: with more than one, the bootstrap draws forks with
   * replacement and rounds within each drawn fork, so that the interval holds the difference
   * between forks as well as between rounds.
   */
  groups?: readonly number[];
}

/** The median of numbers (the mean of the two middle ones for an even count); NaN for none. */
export function median(values: ArrayLike<number>): number {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = n >> 1;
  return n % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Quantile p of ascending values, linearly interpolated between ranks (the "type 7" of R and numpy). */
export function interpolatedQuantile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const h = (n - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/** A's and B's samples, paired by round (a[i] and b[i] were taken side by side), compared. */
export function compareSamples(a: readonly number[], b: readonly number[], options: CompareOptions = {}): Comparison {
  if (a.length !== b.length) throw new Error(`paired samples differ in count: ${a.length} and ${b.length}`);
  const threshold = options.threshold ?? 0;
  const resamples = options.resamples ?? RESAMPLES;
  const confidence = options.confidence ?? CONFIDENCE;
  const n = a.length;
  const logs = new Float64Array(n);
  for (let i = 0; i < n; i++) logs[i] = Math.log(b[i]! / a[i]!);
  const medianA = median(a);
  const medianB = median(b);
  if (n === 0 || logs.some((v) => !Number.isFinite(v))) {
    return { rounds: n, medianA, medianB, ratio: Number.NaN, low: Number.NaN, high: Number.NaN, verdict: 'no change' };
  }
  const estimate = median(logs);
  const rand = prng(options.seed ?? 1);
  const draws = new Float64Array(resamples);
  const members = groupsOf(n, options.groups);
  for (let r = 0; r < resamples; r++) {
    const resample: number[] = [];
    for (let g = 0; g < members.length; g++) {
      const group = members[Math.floor(rand() * members.length)]!;
      for (let i = 0; i < group.length; i++) resample.push(logs[group[Math.floor(rand() * group.length)]!]!);
    }
    draws[r] = median(resample);
  }
  draws.sort();
  const tail = (1 - confidence) / 2;
  const low = Math.exp(interpolatedQuantile(draws, tail));
  const high = Math.exp(interpolatedQuantile(draws, 1 - tail));
  const ratio = Math.exp(estimate);
  return { rounds: n, medianA, medianB, ratio, low, high, verdict: verdictOf(ratio, low, high, threshold) };
}

/** The indices of each group's pairs (one group of all when none are given). */
function groupsOf(n: number, groups: readonly number[] | undefined): number[][] {
  if (!groups) return [Array.from({ length: n }, (_, i) => i)];
  if (groups.length !== n) throw new Error(`groups name ${groups.length} pairs of ${n}`);
  const byGroup = new Map<number, number[]>();
  groups.forEach((g, i) => {
    const list = byGroup.get(g);
    if (list) list.push(i);
    else byGroup.set(g, [i]);
  });
  return [...byGroup.values()];
}

/** The verdict of a ratio and its interval (see the module's comment). */
export function verdictOf(ratio: number, low: number, high: number, threshold = 0): Verdict {
  if (low > 1 && ratio >= 1 + threshold) return 'slower';
  if (high < 1 && ratio <= 1 / (1 + threshold)) return 'faster';
  return 'no change';
}

/**
 * The smallest change a comparison could tell from noise: the larger distance of its interval's
 * ends from its estimate, as a fraction (0.03: ±3 %). An A/A comparison's resolution is the
 * noise floor of its row.
 */
export function resolution(c: Pick<Comparison, 'ratio' | 'low' | 'high'>): number {
  return Math.max(c.ratio / c.low - 1, c.high / c.ratio - 1);
}

/** "−3.1 %" / "+0.4 %": a ratio as a relative change. */
export function formatChange(ratio: number): string {
  if (!Number.isFinite(ratio)) return '—';
  const pct = (ratio - 1) * 100;
  return `${pct < 0 ? '−' : '+'}${Math.abs(pct).toFixed(1)} %`;
}
