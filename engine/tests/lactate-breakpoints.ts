/**
 * Broken-line (segmented) regression for the lactate step-test thresholds (engine/tests/lactate.ts): the
 * continuous piecewise-linear least-squares fit
 *
 *   y = β0 + β1·x + Σj δj·(x − ψj)₊        (one or two breakpoints ψ1 < ψ2)
 *
 * that the R package lactater (Maturana et al., 2021; GitHub fmmattioni/lactater) obtains with the R package
 * `segmented` (Muggeo's iterative method) for its Log-log (one breakpoint, on log intensity and log lactate)
 * and LTP1/LTP2 (two breakpoints) methods.
 *
 * Decided here: `segmented` iterates from starting values at quantiles of x and stops at a stationary point
 * of the residual sum of squares; this module instead looks for the global least-squares optimum directly.
 * For each candidate ψ the coefficients are linear, so the residual sum of squares is profiled over ψ: a grid
 * of candidates (every data x up to 2,000 for one breakpoint; about 300 evenly spaced x for two), then golden-section
 * refinement around the best (coordinate-wise for two). Breakpoints stay inside the data and in order
 * (a candidate that leaves a segment without points has no fit and is skipped); with fewer than 3 (one
 * breakpoint) or 4 (two) distinct x there is no fit.
 */
import { goldenMinimum } from './lactate-fits.ts';

/**
 * Suffix sums over the points sorted by x (x rescaled to [0, 1], y centred), so that the residual sum of
 * squares of any broken line costs O(log n): the normal equations only need sums of 1, x, x², y and x·y over
 * the points beyond each breakpoint.
 */
type Five = [number, number, number, number, number];

interface Sums {
  u: number[];
  lo: number;
  span: number;
  /** s[i]: the sums over the points i.. (sorted by x); s[n] all zero. */
  s: Five[];
  yy: number;
}

function sums(x: readonly number[], y: readonly number[]): Sums {
  const order = x.map((_, i) => i).sort((a, b) => x[a]! - x[b]!);
  const lo = x[order[0]!]!;
  const span = x[order[order.length - 1]!]! - lo || 1;
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  const u = order.map((i) => (x[i]! - lo) / span);
  const v = order.map((i) => y[i]! - mean);
  const s: Five[] = [[0, 0, 0, 0, 0]];
  for (let i = u.length - 1; i >= 0; i--) {
    const [n, sx, sxx, sy, sxy] = s[s.length - 1]!;
    const ui = u[i]!;
    const vi = v[i]!;
    s.push([n + 1, sx + ui, sxx + ui * ui, sy + vi, sxy + ui * vi]);
  }
  s.reverse();
  return { u, lo, span, s, yy: v.reduce((a, b) => a + b * b, 0) };
}

/** The suffix sums [1, x, x², y, xy] over the points with u > p. */
function beyond(z: Sums, p: number): Five {
  let a = 0;
  let b = z.u.length;
  while (a < b) {
    const m = (a + b) >> 1;
    if (z.u[m]! > p) b = m;
    else a = m + 1;
  }
  return z.s[a]!;
}

/** Residual sum of squares of the broken line with sorted breakpoints q (in u) from the suffix sums. */
function rssAt(z: Sums, q: readonly number[]): number {
  const [n0, sx0, sxx0, sy0, sxy0] = z.s[0]!;
  const k = q.length + 2;
  const g: number[][] = Array.from({ length: k }, () => new Array<number>(k + 1).fill(0));
  const set = (r: number, c: number, v: number) => {
    g[r]![c] = v;
    if (c < k) g[c]![r] = v;
  };
  set(0, 0, n0);
  set(0, 1, sx0);
  set(1, 1, sxx0);
  set(0, k, sy0);
  set(1, k, sxy0);
  q.forEach((p, j) => {
    const [n, sx, sxx, sy, sxy] = beyond(z, p);
    set(0, j + 2, sx - p * n);
    set(1, j + 2, sxx - p * sx);
    set(j + 2, k, sxy - p * sy);
    // (x − q[m])₊·(x − p)₊ over x > p, for q[m] ≤ p
    for (let m = 0; m <= j; m++) set(m + 2, j + 2, sxx - (q[m]! + p) * sx + q[m]! * p * n);
  });
  const b = g.map((r) => r[k]!);
  const beta = solve(g);
  if (!beta) return Number.POSITIVE_INFINITY;
  let fit = 0;
  for (let r = 0; r < k; r++) fit += beta[r]! * b[r]!;
  return z.yy - fit;
}

/** Solves the augmented system g (k × (k+1)) by Gaussian elimination with partial pivoting; undefined if singular. */
function solve(g: number[][]): number[] | undefined {
  const k = g.length;
  const scale = Math.max(...g.map((r, i) => Math.abs(r[i]!)));
  for (let c = 0; c < k; c++) {
    let piv = c;
    for (let r = c + 1; r < k; r++) if (Math.abs(g[r]![c]!) > Math.abs(g[piv]![c]!)) piv = r;
    if (Math.abs(g[piv]![c]!) <= 1e-13 * scale) return undefined;
    [g[c], g[piv]] = [g[piv]!, g[c]!];
    for (let r = c + 1; r < k; r++) {
      const f = g[r]![c]! / g[c]![c]!;
      for (let j = c; j <= k; j++) g[r]![j]! -= f * g[c]![j]!;
    }
  }
  const out = new Array<number>(k).fill(0);
  for (let r = k - 1; r >= 0; r--) {
    let s = g[r]![k];
    for (let j = r + 1; j < k; j++) s! -= g[r]![j]! * out[j]!;
    out[r] = s! / g[r]![r]!;
  }
  return out;
}

/** Residual sum of squares of the broken line with breakpoints psi (increasing) through (x, y). */
export function brokenLineRss(x: readonly number[], y: readonly number[], psi: readonly number[]): number {
  const z = sums(x, y);
  return rssAt(
    z,
    psi.map((p) => (p - z.lo) / z.span),
  );
}

/** The least-squares breakpoint of a one-breakpoint broken line, or undefined with fewer than 3 distinct x. */
export function oneBreakpoint(x: readonly number[], y: readonly number[]): number | undefined {
  const z = sums(x, y);
  const xs = [...new Set(z.u)];
  if (xs.length < 3) return undefined;
  const rss = (p: number[]) => rssAt(z, p);
  const step = Math.max(1, Math.floor((xs.length - 2) / 2000));
  let best = 1;
  let bestRss = Number.POSITIVE_INFINITY;
  for (let i = 1; i < xs.length - 1; i += step) {
    const r = rss([xs[i]!]);
    if (r < bestRss) [best, bestRss] = [i, r];
  }
  const lo = xs[Math.max(0, best - step)]!;
  const hi = xs[Math.min(xs.length - 1, best + step)]!;
  return z.lo + z.span * goldenMinimum((p) => rss([p]), lo, hi, 1e-12);
}

/** The least-squares breakpoints ψ1 < ψ2 of a two-breakpoint broken line, or undefined with fewer than 4 distinct x. */
export function twoBreakpoints(x: readonly number[], y: readonly number[]): [number, number] | undefined {
  const z = sums(x, y);
  const xs = [...new Set(z.u)];
  if (xs.length < 4) return undefined;
  const rss = (p: number[]) => rssAt(z, p);
  const step = Math.max(1, Math.floor((xs.length - 2) / 300));
  let best: [number, number] = [1, 2];
  let bestRss = Number.POSITIVE_INFINITY;
  for (let i = 1; i < xs.length - 2; i += step) {
    for (let j = i + step; j < xs.length - 1; j += step) {
      const r = rss([xs[i]!, xs[j]!]);
      if (r < bestRss) [best, bestRss] = [[i, j], r];
    }
  }
  const at = (k: number) => xs[Math.min(xs.length - 1, Math.max(0, k))]!;
  let p1 = xs[best[0]]!;
  let p2 = xs[best[1]]!;
  for (let round = 0; round < 30; round++) {
    const was = [p1, p2];
    p1 = goldenMinimum((p) => rss([p, p2]), at(best[0] - step), Math.min(at(best[0] + step), p2), 1e-12);
    p2 = goldenMinimum((p) => rss([p1, p]), Math.max(at(best[1] - step), p1), at(best[1] + step), 1e-12);
    if (Math.abs(was[0]! - p1) + Math.abs(was[1]! - p2) < 1e-9 * (1 + Math.abs(p2))) break;
  }
  return [z.lo + z.span * p1, z.lo + z.span * p2];
}
