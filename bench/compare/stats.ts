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
 *
 * A table of rows is judged as a whole (`tableVerdicts`): 36 rows each judged at 95 % call about two
 * of them changed when nothing changed. Each row also gets a p-value, the bootstrap's own answer to
 * "no change" (twice the smaller share of its draws on either side of 1; where too few draws lie
 * beyond 1 to resolve it, the normal tail of the draws' spread), and Holm's step-down method over
 * the table keeps the chance of any false verdict in it at 5 %: the row with the smallest p-value
 * must pass 0.05/m, the next 0.05/(m−1), and so on until one does not. A row passing it (and its
 * threshold) is `faster` or `slower`; the others are `no change`.
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
  /** The bootstrap's two-sided p-value of "no change" (the module's comment). */
  p: number;
  /** This row's verdict alone; `tableVerdicts` judges a table's rows together. */
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
    return { rounds: n, medianA, medianB, ratio: Number.NaN, low: Number.NaN, high: Number.NaN, p: 1, verdict: 'no change' };
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
  return { rounds: n, medianA, medianB, ratio, low, high, p: bootstrapP(draws, estimate), verdict: verdictOf(ratio, low, high, threshold) };
}

/** Draws beyond 0 needed on the rarer side for their share to be the p-value; fewer resolve nothing finer than 1/resamples. */
const TAIL_DRAWS = 20;

/**
 * The two-sided p-value of "no change" from the sorted bootstrap draws of the log ratio: twice the
 * share on the rarer side of 0, or, when fewer than TAIL_DRAWS lie there, the normal tail at the
 * estimate's distance from 0 in standard deviations of the draws.
 */
function bootstrapP(draws: Float64Array, estimate: number): number {
  let below = 0;
  let above = 0;
  for (const d of draws) {
    if (d <= 0) below++;
    if (d >= 0) above++;
  }
  const rarer = Math.min(below, above);
  if (rarer >= TAIL_DRAWS) return Math.min(1, (2 * rarer) / draws.length);
  let mean = 0;
  for (const d of draws) mean += d;
  mean /= draws.length;
  let sq = 0;
  for (const d of draws) sq += (d - mean) ** 2;
  const sd = Math.sqrt(sq / Math.max(1, draws.length - 1));
  if (!(sd > 0)) return estimate === 0 ? 1 : 0;
  return Math.min(1, erfc(Math.abs(estimate) / sd / Math.SQRT2));
}

/** The complementary error function (Numerical Recipes' erfcc: relative error under 1.2e-7 everywhere). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * Holm's step-down method: which of `ps` are significant with the chance of any false one at most
 * `alpha`. Sorted ascending, the k-th smallest (k from 0) must be at most alpha / (m − k); the first
 * that is not, and every larger one, are not significant.
 */
export function holm(ps: readonly number[], alpha = 1 - CONFIDENCE): boolean[] {
  const m = ps.length;
  const order = ps.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p);
  const significant = new Array<boolean>(m).fill(false);
  for (let k = 0; k < m; k++) {
    if (!(order[k]!.p <= alpha / (m - k))) break;
    significant[order[k]!.i] = true;
  }
  return significant;
}

/** The verdicts of a table's rows judged together (Holm over their p-values; each row's threshold still applies). */
export function tableVerdicts(
  rows: readonly Pick<Comparison, 'ratio' | 'p'>[],
  thresholds: readonly number[],
  alpha = 1 - CONFIDENCE,
): Verdict[] {
  const significant = holm(
    rows.map((r) => r.p),
    alpha,
  );
  return rows.map((r, i) => {
    if (!significant[i]) return 'no change';
    const threshold = thresholds[i] ?? 0;
    if (r.ratio >= 1 + threshold && r.ratio > 1) return 'slower';
    if (r.ratio <= 1 / (1 + threshold) && r.ratio < 1) return 'faster';
    return 'no change';
  });
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
