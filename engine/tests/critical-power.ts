/**
 * Critical power (CP) and W′ from a test's maximal efforts, by the four models of the R package
 * cyclingtools (`critical_power()`), with the same model forms, fitting criteria, standard errors,
 * R² and residual standard error as cyclingtools reports them. Pure functions on arrays.
 *
 * An effort is (duration t in s, mean value P over it). The same functions give critical speed (CS,
 * m/s) and D′ (m) when P is a mean speed: cyclingtools' `critical_speed()` turns (distance, time)
 * into speed = distance / time and fits the identical models, so W′ is in J for power and in m for
 * speed, and "work" below is distance for speed.
 *
 * The models (n efforts, k parameters):
 * - 3-parameter hyperbolic (Morton 1996), in the form cyclingtools fits:
 *     t = W′/(P − CP) + W′/(CP − Pmax)
 *   nonlinear least squares of duration on power (residuals in s), k = 3, at least 4 efforts.
 * - 2-parameter hyperbolic (Hill 1993): t = W′/(P − CP), equivalently P = W′/t + CP, fitted as
 *   cyclingtools fits it: nonlinear least squares of duration on power (residuals in s), k = 2, at
 *   least 3 efforts.
 * - Linear work-time (Moritani et al. 1981): P·t = W′ + CP·t, ordinary least squares of work on
 *   duration (residuals in J or m), k = 2.
 * - Linear 1/time (Whipp et al. 1982): P = W′·(1/t) + CP, ordinary least squares of power on 1/t
 *   (residuals in W or m/s), k = 2.
 *
 * The nonlinear fits use Levenberg–Marquardt (Marquardt's diagonal scaling, analytic Jacobian, the
 * damped normal equations solved by `solve3` of engine/curves/intensity-duration-model.ts) from
 * cyclingtools' start values: W′ = max P · min t, CP = 0.9 · min P, Pmax = 1.5 · max P. For the
 * 2-parameter model the 2×2 system is embedded in 3×3 with a unit third row.
 *
 * Standard errors, as R's `summary()` of cyclingtools' `nls`/`lm` fits reports them: with the
 * residual variance s² = RSS/(n − k), the covariance of the parameters is s²·(JᵀJ)⁻¹, J the Jacobian
 * of the fitted response at the optimum (the design matrix for the linear models); each standard
 * error is the square root of its diagonal element. `see` is s itself (cyclingtools' "RMSE", R's
 * residual standard error), in the response's unit: s for the hyperbolic models, J (m) for
 * work-time, W (m/s) for 1/time. `r2`: for the linear models 1 − RSS/TSS; for the hyperbolic ones,
 * as cyclingtools, the squared correlation between the measured and the fitted durations (a pseudo
 * R²).
 *
 * Decided here, where cyclingtools leaves it open:
 * - Efforts with a non-finite or non-positive duration or value are not used; `efforts` counts those
 *   used. The linear models need at least 2 efforts with distinct durations; with exactly 2 the line
 *   passes through both, so `r2` is 1 and the standard errors and `see` are null (no residual degree
 *   of freedom) rather than R's NaN.
 * - cyclingtools only bounds the nonlinear parameters below by 0 (nlsLM's box). Here every iterate
 *   keeps each effort's predicted duration positive and finite: W′ > 0, 0 < CP < min P and, for the
 *   3-parameter model, Pmax > max P; a step leaving that region is treated as a failed step (λ grows).
 * - One start for power and speed: cyclingtools' `critical_speed()` starts CS at 0.7 · min speed
 *   rather than 0.9; the start only chooses where the solver begins (on its demo data both reach the
 *   printed optimum).
 * - Stopping: a relative step below 1e-10 in every parameter, or no step lowering the residual sum of
 *   squares up to λ = 1e16 (a minimum to machine precision). 1000 iterations (cyclingtools' maxiter)
 *   without either is a fit that did not converge and is returned with a reason.
 * - A fit is returned with a `reason` instead of numbers when there are too few efforts (fewer than
 *   k + 1 for the nonlinear models, as cyclingtools), when the normal equations are singular, when the
 *   solver does not converge, when a linear fit gives CP ≤ 0 or W′ ≤ 0, or when a nonlinear optimum
 *   lies within 1e-6 (relative) of the admissible region's edge (CP → 0 or → min P, W′ → 0,
 *   Pmax → max P; where nlsLM would stop on its bound 0) or, for the 3-parameter model, runs to
 *   Pmax → ∞ (its duration shift W′/(Pmax − CP) below 1e-6 of the shortest effort: the data follow
 *   the 2-parameter model and Pmax is not determined), e.g. values that do not fall with duration:
 *   cyclingtools would print such numbers; here they are not estimates of anything physiological.
 */

import { solve3 } from '../curves/intensity-duration-model.ts';

export type CriticalPowerModelName = 'three-parameter' | 'hyperbolic' | 'linear-work-time' | 'linear-inverse-time';

export interface CriticalPowerEstimate {
  ok: true;
  model: CriticalPowerModelName;
  /** The number of efforts used. */
  efforts: number;
  /** Critical power (W) or critical speed (m/s). */
  cp: number;
  cpSe: number | null;
  /** W′ (J) or D′ (m). */
  wPrime: number;
  wPrimeSe: number | null;
  /** Pmax (W) or Smax (m/s): the 3-parameter model only, null otherwise. */
  pmax: number | null;
  pmaxSe: number | null;
  /** R² (a pseudo R² for the hyperbolic models, see the header). */
  r2: number;
  /** Residual standard error √(RSS/(n − k)) in the response's unit (cyclingtools' "RMSE"). */
  see: number | null;
}

export interface CriticalPowerUnfit {
  ok: false;
  model: CriticalPowerModelName;
  efforts: number;
  /** Why the model gives no estimate. */
  reason: string;
}

export type CriticalPowerResult = CriticalPowerEstimate | CriticalPowerUnfit;

interface Efforts {
  t: Float64Array;
  y: Float64Array;
}

/** The usable efforts (finite, positive duration and value), in the given order. */
function usable(durations: ArrayLike<number>, values: ArrayLike<number>): Efforts {
  const t: number[] = [];
  const y: number[] = [];
  const m = Math.min(durations.length, values.length);
  for (let i = 0; i < m; i++) {
    const ti = durations[i]!;
    const yi = values[i]!;
    if (Number.isFinite(ti) && ti > 0 && Number.isFinite(yi) && yi > 0) {
      t.push(ti);
      y.push(yi);
    }
  }
  return { t: Float64Array.from(t), y: Float64Array.from(y) };
}

function unfit(model: CriticalPowerModelName, efforts: number, reason: string): CriticalPowerUnfit {
  return { ok: false, model, efforts, reason };
}

function distinctCount(x: Float64Array): number {
  return new Set(x).size;
}

interface LineFit {
  intercept: number;
  slope: number;
  interceptSe: number | null;
  slopeSe: number | null;
  r2: number;
  see: number | null;
}

/** Ordinary least squares y = intercept + slope·x with R's `lm` standard errors. */
function fitLine(x: Float64Array, y: Float64Array): LineFit {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = x[i]! - mx;
    const dy = y[i]! - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  const slope = sxy / sxx;
  const intercept = my - slope * mx;
  let rss = 0;
  for (let i = 0; i < n; i++) {
    const e = y[i]! - intercept - slope * x[i]!;
    rss += e * e;
  }
  const r2 = syy > 0 ? 1 - rss / syy : 1;
  if (n <= 2) return { intercept, slope, interceptSe: null, slopeSe: null, r2, see: null };
  const s2 = rss / (n - 2);
  let sumX2 = 0;
  for (let i = 0; i < n; i++) sumX2 += x[i]! * x[i]!;
  return {
    intercept,
    slope,
    interceptSe: Math.sqrt((s2 * sumX2) / (n * sxx)),
    slopeSe: Math.sqrt(s2 / sxx),
    r2,
    see: Math.sqrt(s2),
  };
}

function linearModel(
  model: CriticalPowerModelName,
  durations: ArrayLike<number>,
  values: ArrayLike<number>,
  workTime: boolean,
): CriticalPowerResult {
  const { t, y } = usable(durations, values);
  const n = t.length;
  if (n < 2) return unfit(model, n, 'needs at least 2 efforts');
  if (distinctCount(t) < 2) return unfit(model, n, 'needs at least 2 distinct durations');
  // Work-time: work = W′ + CP·t. 1/time: P = CP + W′·(1/t).
  const x = workTime ? t : t.map((ti) => 1 / ti);
  const response = workTime ? t.map((ti, i) => ti * y[i]!) : y;
  const line = fitLine(x, response);
  const cp = workTime ? line.slope : line.intercept;
  const wPrime = workTime ? line.intercept : line.slope;
  const cpSe = workTime ? line.slopeSe : line.interceptSe;
  const wPrimeSe = workTime ? line.interceptSe : line.slopeSe;
  if (!(cp > 0)) return unfit(model, n, 'the fitted CP is not positive');
  if (!(wPrime > 0)) return unfit(model, n, "the fitted W' is not positive");
  return { ok: true, model, efforts: n, cp, cpSe, wPrime, wPrimeSe, pmax: null, pmaxSe: null, r2: line.r2, see: line.see };
}

/** Linear work-time model: P·t = W′ + CP·t (see the header). */
export function fitLinearWorkTime(durations: ArrayLike<number>, values: ArrayLike<number>): CriticalPowerResult {
  return linearModel('linear-work-time', durations, values, true);
}

/** Linear 1/time model: P = W′·(1/t) + CP (see the header). */
export function fitLinearInverseTime(durations: ArrayLike<number>, values: ArrayLike<number>): CriticalPowerResult {
  return linearModel('linear-inverse-time', durations, values, false);
}

/**
 * A model of duration as a function of the value, θ = (W′, CP) or (W′, CP, Pmax): fills the predicted
 * durations (and, when given, the Jacobian by parameter); false when θ leaves the admissible region.
 */
type DurationModel = (theta: readonly number[], p: Float64Array, pred: Float64Array, jac?: Float64Array[]) => boolean;

const hyperbolic: DurationModel = (theta, p, pred, jac) => {
  const w = theta[0]!;
  const cp = theta[1]!;
  let pMin = Infinity;
  for (let i = 0; i < p.length; i++) pMin = Math.min(pMin, p[i]!);
  if (!(w > 0 && cp > 0 && cp < pMin)) return false;
  for (let i = 0; i < p.length; i++) {
    const inv = 1 / (p[i]! - cp);
    pred[i] = w * inv;
    if (jac) {
      jac[0]![i] = inv; // ∂t/∂W′
      jac[1]![i] = w * inv * inv; // ∂t/∂CP
    }
  }
  return true;
};

const threeParameter: DurationModel = (theta, p, pred, jac) => {
  const w = theta[0]!;
  const cp = theta[1]!;
  const pmax = theta[2]!;
  let pMin = Infinity;
  let pMaxData = -Infinity;
  for (let i = 0; i < p.length; i++) {
    pMin = Math.min(pMin, p[i]!);
    pMaxData = Math.max(pMaxData, p[i]!);
  }
  if (!(w > 0 && cp > 0 && cp < pMin && pmax > pMaxData)) return false;
  const invMax = 1 / (cp - pmax); // negative
  for (let i = 0; i < p.length; i++) {
    const inv = 1 / (p[i]! - cp);
    pred[i] = w * inv + w * invMax;
    if (jac) {
      jac[0]![i] = inv + invMax; // ∂t/∂W′
      jac[1]![i] = w * inv * inv - w * invMax * invMax; // ∂t/∂CP
      jac[2]![i] = w * invMax * invMax; // ∂t/∂Pmax
    }
  }
  return true;
};

/** JᵀJ (k×k, embedded row-major in 3×3 with a unit diagonal beyond k) and Jᵀr. */
function normalEquations(jac: Float64Array[], r: Float64Array, k: number): { a: number[]; g: number[] } {
  const a = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  const g = [0, 0, 0];
  for (let p = k; p < 3; p++) a[p * 4] = 1;
  for (let p = 0; p < k; p++) {
    for (let q = 0; q <= p; q++) {
      let s = 0;
      for (let i = 0; i < r.length; i++) s += jac[p]![i]! * jac[q]![i]!;
      a[p * 3 + q] = s;
      a[q * 3 + p] = s;
    }
    let s = 0;
    for (let i = 0; i < r.length; i++) s += jac[p]![i]! * r[i]!;
    g[p] = s;
  }
  return { a, g };
}

function sumOfSquares(model: DurationModel, theta: readonly number[], e: Efforts, pred: Float64Array): number {
  if (!model(theta, e.y, pred)) return Infinity;
  let s = 0;
  for (let i = 0; i < pred.length; i++) {
    const d = pred[i]! - e.t[i]!;
    s += d * d;
  }
  return Number.isFinite(s) ? s : Infinity;
}

const MAX_ITERATIONS = 1000;

/** Levenberg–Marquardt on the durations (see the header): the optimum, or why there is none. */
function leastSquares(model: DurationModel, start: number[], e: Efforts): { theta: number[]; sse: number } | string {
  const k = start.length;
  const n = e.t.length;
  const pred = new Float64Array(n);
  const r = new Float64Array(n);
  const jac = Array.from({ length: k }, () => new Float64Array(n));
  let theta = start.slice();
  let sse = sumOfSquares(model, theta, e, pred);
  if (!Number.isFinite(sse)) return 'the start values are not admissible';
  let lambda = 1e-3;
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    model(theta, e.y, pred, jac);
    for (let i = 0; i < n; i++) r[i] = e.t[i]! - pred[i]!;
    const { a, g } = normalEquations(jac, r, k);
    let accepted = false;
    let converged = false;
    while (lambda <= 1e16) {
      const damped = a.slice();
      for (let p = 0; p < k; p++) damped[p * 4] = a[p * 4]! * (1 + lambda);
      const step = solve3(damped, g);
      if (step !== undefined) {
        const next = theta.map((v, p) => v + step[p]!);
        const nextSse = sumOfSquares(model, next, e, pred);
        if (nextSse < sse) {
          converged = theta.every((v, p) => Math.abs(step[p]!) <= 1e-10 * Math.abs(v));
          theta = next;
          sse = nextSse;
          lambda = Math.max(lambda / 3, 1e-12);
          accepted = true;
          break;
        }
      }
      lambda *= 4;
    }
    if (!accepted || converged || sse === 0) return { theta, sse };
  }
  return `the fit did not converge in ${MAX_ITERATIONS} iterations`;
}

function squaredCorrelation(a: Float64Array, b: Float64Array): number {
  const n = a.length;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return (sab * sab) / (saa * sbb);
}

/**
 * Why an optimum on the edge of the admissible region is no estimate, or undefined: the solver can only
 * approach the edge, so within 1e-6 of it (relative) the data pull the parameters out of the model.
 */
function atEdge(theta: readonly number[], yMin: number, yMax: number, tMin: number): string | undefined {
  const [w, cp, pmax] = theta as [number, number, number | undefined];
  if (!(cp > 1e-6 * yMin)) return 'the fitted CP runs to 0: the efforts do not fall with duration as the model needs';
  if (!(cp < yMin * (1 - 1e-6))) return 'the fitted CP runs to the lowest value of the efforts';
  if (!(w > 1e-6 * yMax)) return "the fitted W' runs to 0";
  if (pmax !== undefined && !(pmax > yMax * (1 + 1e-6))) return 'the fitted Pmax runs to the highest value of the efforts';
  // W′/(Pmax − CP) is the 3-parameter model's shift of every duration: negligible, Pmax runs to ∞.
  if (pmax !== undefined && !(w / (pmax - cp) > 1e-6 * tMin))
    return 'the fitted Pmax runs to infinity: the efforts follow the 2-parameter model';
  return undefined;
}

function nonlinearModel(
  name: CriticalPowerModelName,
  model: DurationModel,
  k: 2 | 3,
  durations: ArrayLike<number>,
  values: ArrayLike<number>,
): CriticalPowerResult {
  const e = usable(durations, values);
  const n = e.t.length;
  const minimum = k + 1;
  if (n < minimum) return unfit(name, n, `needs at least ${minimum} efforts`);
  if (distinctCount(e.y) < k) return unfit(name, n, `needs at least ${k} distinct values`);
  let tMin = Infinity;
  let yMin = Infinity;
  let yMax = -Infinity;
  for (let i = 0; i < n; i++) {
    tMin = Math.min(tMin, e.t[i]!);
    yMin = Math.min(yMin, e.y[i]!);
    yMax = Math.max(yMax, e.y[i]!);
  }
  const start = [yMax * tMin, 0.9 * yMin, 1.5 * yMax].slice(0, k);
  const fit = leastSquares(model, start, e);
  if (typeof fit === 'string') return unfit(name, n, fit);
  const { theta, sse } = fit;
  const edge = atEdge(theta, yMin, yMax, tMin);
  if (edge !== undefined) return unfit(name, n, edge);
  const pred = new Float64Array(n);
  const jac = Array.from({ length: k }, () => new Float64Array(n));
  model(theta, e.y, pred, jac);
  const { a } = normalEquations(jac, new Float64Array(n), k);
  const s2 = sse / (n - k);
  const se: number[] = [];
  for (let p = 0; p < k; p++) {
    const unit = [0, 0, 0];
    unit[p] = 1;
    const variance = solve3(a, unit)?.[p];
    if (variance === undefined || !(variance > 0)) return unfit(name, n, 'the fit is singular: its parameters are not determined');
    se.push(Math.sqrt(s2 * variance));
  }
  return {
    ok: true,
    model: name,
    efforts: n,
    cp: theta[1]!,
    cpSe: se[1]!,
    wPrime: theta[0]!,
    wPrimeSe: se[0]!,
    pmax: k === 3 ? theta[2]! : null,
    pmaxSe: k === 3 ? se[2]! : null,
    r2: squaredCorrelation(e.t, pred),
    see: Math.sqrt(s2),
  };
}

/** 2-parameter hyperbolic model t = W′/(P − CP), least squares on duration (see the header). */
export function fitHyperbolic(durations: ArrayLike<number>, values: ArrayLike<number>): CriticalPowerResult {
  return nonlinearModel('hyperbolic', hyperbolic, 2, durations, values);
}

/** 3-parameter model t = W′/(P − CP) + W′/(CP − Pmax), least squares on duration (see the header). */
export function fitThreeParameter(durations: ArrayLike<number>, values: ArrayLike<number>): CriticalPowerResult {
  return nonlinearModel('three-parameter', threeParameter, 3, durations, values);
}

/** All four models, in cyclingtools' order (3-parameter, hyperbolic, work-time, 1/time). */
export function fitCriticalPowerModels(durations: ArrayLike<number>, values: ArrayLike<number>): CriticalPowerResult[] {
  return [
    fitThreeParameter(durations, values),
    fitHyperbolic(durations, values),
    fitLinearWorkTime(durations, values),
    fitLinearInverseTime(durations, values),
  ];
}
