/**
 * The curve fits behind the lactate step-test thresholds (engine/tests/lactate.ts), as pure functions on
 * arrays: ordinary least squares (Householder QR), the polynomial, natural cubic spline and
 * exponential-plus-constant fits that the R package lactater (Maturana et al., 2021, "lactater: An R
 * package for lactate threshold determination", GitHub fmmattioni/lactater) offers, R's `seq(from, to, by)`
 * grid, R's type-7 quantile, and R's `approx(..., ties = "ordered")` lookup that lactater uses to read an
 * intensity off a fitted curve.
 *
 * - Polynomial of degree 3 or 4 (lactater's "3rd/4th degree polynomial", R `lm` on raw powers): fitted on
 *   intensity rescaled to [0, 1] for conditioning; the fitted values and predictions are the same as on
 *   raw powers, and the derivative's roots are mapped back to raw intensity.
 * - Natural cubic spline with 4 degrees of freedom plus an intercept (lactater's "B-spline", R
 *   `glm(lactate ~ splines::ns(intensity, 4))`): boundary knots at the smallest and largest intensity,
 *   interior knots at the 25th, 50th and 75th percentiles (type 7) of the fitted intensities. Any basis of
 *   that space gives the same least-squares fit; the truncated-power basis of natural splines is used here.
 * - Exponential plus constant, lactate = a + b·e^(c·intensity) (lactater: `minpack.lm::nlsLM` from
 *   a = 0, b = 1, c = 0): a and b are linear given c, so the residual sum of squares is profiled over c
 *   and minimised by a grid search and golden-section refinement; this finds the least-squares optimum
 *   that Levenberg–Marquardt converges to when it converges.
 */

/** R's `seq(from, to, by)` for by > 0: from + i·by for i = 0 .. floor((to − from)/by + 1e-10). */
export function rSeq(from: number, to: number, by: number): number[] {
  const n = Math.floor((to - from) / by + 1e-10);
  const out: number[] = [];
  for (let i = 0; i <= n; i++) out.push(from + i * by);
  return out;
}

/** R's default (type 7) quantile of `values` at probability p. */
export function quantile7(values: readonly number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  const h = (v.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, v.length - 1);
  return v[lo]! + (h - lo) * (v[hi]! - v[lo]!);
}

/**
 * Least-squares coefficients of y on the columns of `rows` (one row per observation) by Householder QR.
 * Columns that are (numerically) dependent get a zero coefficient.
 */
export function leastSquares(rows: readonly (readonly number[])[], y: readonly number[]): number[] {
  const n = rows.length;
  const p = rows[0]?.length ?? 0;
  const a = rows.map((r) => [...r]);
  const b = [...y];
  const diag: number[] = [];
  for (let k = 0; k < p; k++) {
    let norm = 0;
    for (let i = k; i < n; i++) norm += a[i]![k]! * a[i]![k]!;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      diag.push(0);
      continue;
    }
    const alpha = a[k]![k]! > 0 ? -norm : norm;
    const v: number[] = [];
    for (let i = k; i < n; i++) v.push(a[i]![k]!);
    v[0]! -= alpha;
    let vv = 0;
    for (const e of v) vv += e * e;
    if (vv > 0) {
      for (let j = k; j < p; j++) reflect(a, j, k, v, vv);
      let s = 0;
      for (let i = k; i < n; i++) s += v[i - k]! * b[i]!;
      for (let i = k; i < n; i++) b[i]! -= (2 * s * v[i - k]!) / vv;
    }
    diag.push(alpha);
  }
  const scale = Math.max(...diag.map(Math.abs));
  const coef = new Array<number>(p).fill(0);
  for (let k = p - 1; k >= 0; k--) {
    if (Math.abs(a[k]![k]!) <= 1e-10 * scale) continue;
    let s = b[k];
    for (let j = k + 1; j < p; j++) s! -= a[k]![j]! * coef[j]!;
    coef[k] = s! / a[k]![k]!;
  }
  return coef;
}

/** Applies the Householder reflection I − 2vvᵀ/(vᵀv) (v acting on rows k..n) to column j of a. */
function reflect(a: number[][], j: number, k: number, v: readonly number[], vv: number): void {
  let s = 0;
  for (let i = k; i < a.length; i++) s += v[i - k]! * a[i]![j]!;
  for (let i = k; i < a.length; i++) a[i]![j]! -= (2 * s * v[i - k]!) / vv;
}

/** A fitted curve: lactate predicted at an intensity, and the fitted values at the data. */
export interface CurveFit {
  predict(x: number): number;
  fitted: number[];
}

/** A polynomial fit, with the roots of p′(x) = slope (real parts, as R's `Re(polyroot(...))` gives). */
export interface PolynomialFit extends CurveFit {
  slopeRoots(slope: number): number[];
}

/** Least-squares polynomial of `degree` (3 or 4) through (x, y). */
export function fitPolynomial(x: readonly number[], y: readonly number[], degree: number): PolynomialFit {
  const lo = Math.min(...x);
  const span = Math.max(...x) - lo || 1;
  const powers = (u: number) => Array.from({ length: degree + 1 }, (_, k) => u ** k);
  const coef = leastSquares(
    x.map((v) => powers((v - lo) / span)),
    y,
  );
  const predict = (v: number) => {
    const u = (v - lo) / span;
    let s = 0;
    for (let k = degree; k >= 0; k--) s = s * u + coef[k]!;
    return s;
  };
  const slopeRoots = (slope: number): number[] => {
    if (degree !== 3) throw new RangeError('slopeRoots is defined for the cubic only');
    // dp/du = c1 + 2 c2 u + 3 c3 u², and dp/dx = (dp/du)/span
    const qa = 3 * coef[3]!;
    const qb = 2 * coef[2]!;
    const qc = coef[1]! - slope * span;
    const us = quadraticRootsRealParts(qa, qb, qc);
    return us.map((u) => lo + span * u);
  };
  return { predict, fitted: x.map(predict), slopeRoots };
}

/** Real parts of the roots of qa·u² + qb·u + qc (complex pairs give their common real part twice). */
function quadraticRootsRealParts(qa: number, qb: number, qc: number): number[] {
  if (qa === 0) return qb === 0 ? [] : [-qc / qb];
  const disc = qb * qb - 4 * qa * qc;
  if (disc < 0) return [-qb / (2 * qa), -qb / (2 * qa)];
  const sq = Math.sqrt(disc);
  const q = -0.5 * (qb + (qb >= 0 ? sq : -sq));
  const r1 = q / qa;
  const r2 = q !== 0 ? qc / q : -qb / qa - r1;
  return [r1, r2];
}

/** Natural cubic spline with 4 degrees of freedom plus intercept (R: glm(y ~ splines::ns(x, 4))). */
export function fitNaturalSpline(x: readonly number[], y: readonly number[]): CurveFit {
  const lo = Math.min(...x);
  const span = Math.max(...x) - lo || 1;
  const knots = [0, quantile7(x, 0.25), quantile7(x, 0.5), quantile7(x, 0.75), 1].map((k, i) => (i === 0 || i === 4 ? k : (k - lo) / span));
  const last = knots.length - 1;
  const cube = (u: number, k: number) => (u > k ? (u - k) ** 3 : 0);
  const d = (u: number, k: number) => (cube(u, knots[k]!) - cube(u, knots[last]!)) / (knots[last]! - knots[k]!);
  const basis = (v: number): number[] => {
    const u = (v - lo) / span;
    const row = [1, u];
    for (let k = 0; k < last - 1; k++) row.push(d(u, k) - d(u, last - 1));
    return row;
  };
  const coef = leastSquares(x.map(basis), y);
  const predict = (v: number) => basis(v).reduce((s, b, i) => s + b * coef[i]!, 0);
  return { predict, fitted: x.map(predict) };
}

/** An exponential-plus-constant fit y = a + b·e^(c·x). */
export interface ExponentialFit extends CurveFit {
  a: number;
  b: number;
  c: number;
}

/** Least-squares y = a + b·e^(c·x), c profiled (see the header). */
export function fitExponential(x: readonly number[], y: readonly number[]): ExponentialFit {
  const top = Math.max(...x);
  const span = top - Math.min(...x) || 1;
  // t = c·span; e^(c(x − top)) keeps the basis in (0, 1] for c > 0
  const linear = (t: number) => {
    const c = t / span;
    const coef = leastSquares(
      x.map((v) => [1, Math.exp(c * (v - top))]),
      y,
    );
    let rss = 0;
    for (let i = 0; i < x.length; i++) rss += (y[i]! - coef[0]! - coef[1]! * Math.exp(c * (x[i]! - top))) ** 2;
    return { coef, rss };
  };
  const grid = rSeq(-40, 40, 0.05).filter((t) => Math.abs(t) > 1e-9);
  let best = grid[0]!;
  let bestRss = Number.POSITIVE_INFINITY;
  for (const t of grid) {
    const { rss } = linear(t);
    if (rss < bestRss) [best, bestRss] = [t, rss];
  }
  const t = goldenMinimum((s) => linear(s).rss, best - 0.05, best + 0.05);
  const c = t / span;
  const { coef } = linear(t);
  const a = coef[0]!;
  const b = coef[1]! * Math.exp(-c * top);
  const predict = (v: number) => a + coef[1]! * Math.exp(c * (v - top));
  return { a, b, c, predict, fitted: x.map(predict) };
}

/** The minimum of f on [lo, hi] by golden-section search (f assumed unimodal there). */
export function goldenMinimum(f: (v: number) => number, lo: number, hi: number, tol = 1e-12): number {
  const g = (Math.sqrt(5) - 1) / 2;
  let a = lo;
  let b = hi;
  let c = b - g * (b - a);
  let d = a + g * (b - a);
  let fc = f(c);
  let fd = f(d);
  while (b - a > tol * (1 + Math.abs(a) + Math.abs(b))) {
    if (fc <= fd) {
      [b, d, fd] = [d, c, fc];
      c = b - g * (b - a);
      fc = f(c);
    } else {
      [a, c, fc] = [c, d, fd];
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

/**
 * R's `approx(x, y, xout = v, ties = "ordered")$y` (linear, rule 1): x is taken as sorted without checking,
 * the interval found by bisection; NaN outside [x[0], x[n−1]].
 */
export function approxOrdered(x: readonly number[], y: readonly number[], v: number): number {
  let i = 0;
  let j = x.length - 1;
  if (j < 0 || v < x[i]! || v > x[j]!) return Number.NaN;
  while (i < j - 1) {
    const ij = Math.floor((i + j) / 2);
    if (v < x[ij]!) j = ij;
    else i = ij;
  }
  if (v === x[j]) return y[j]!;
  if (v === x[i]) return y[i]!;
  return y[i]! + (y[j]! - y[i]!) * ((v - x[i]!) / (x[j]! - x[i]!));
}
