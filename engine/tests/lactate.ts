/**
 * Lactate thresholds from a lactate step test, as the R package lactater defines them (Maturana FM, Schellhorn
 * P, Erz G, Burgstahler C, Widmann M, Munz B, Soares RN, Murias JM, Thiel A, Nieß AM, 2021, "lactater: An R
 * package for lactate threshold determination"; GitHub fmmattioni/lactater). Pure functions on arrays.
 *
 * Input: the steps in increasing intensity (power in W, or speed), each with its blood lactate (mmol/L) and,
 * where recorded, heart rate (bpm). As in lactater, a first step at intensity 0 is the resting (baseline)
 * sample; for fitting and plotting it is placed one step increment below the first exercise step.
 *
 * Methods (each result names its method, category and fitting; or, when the method cannot apply, a reason):
 * - Log-log: one breakpoint of a broken-line regression of log lactate on log intensity, over the data
 *   linearly interpolated on a fine intensity grid (Beaver et al., 1985).
 * - OBLA 2.0 / 2.5 / 3.0 / 3.5 / 4.0: the intensity at which the fitted lactate curve reaches that lactate.
 * - Bsln + 0.5 / 1.0 / 1.5: the intensity at which the fitted curve reaches resting lactate plus that amount.
 * - Dmax: on a cubic fitted to the exercise steps, the intensity furthest from the straight line between the
 *   first and the last step, i.e. where the cubic's slope equals the line's (Cheng et al., 1992).
 * - ModDmax: the same, the line starting at the step preceding the first rise in lactate of at least 0.4 mmol/L
 *   to the next step (Bishop et al., 1998).
 * - Exp-Dmax: on the exponential-plus-constant fit a + b·e^(c·x), the intensity furthest from the line between
 *   the first and last step, ln((e^(c·xf) − e^(c·xi)) / (c·(xf − xi))) / c (Hughson et al., 1987).
 * - Log-Poly-ModDmax / Log-Exp-ModDmax: Dmax on the cubic / exponential with the line starting at the Log-log
 *   point (Jamnick et al., 2018).
 * - LTP1 / LTP2: two breakpoints of a broken-line regression of lactate on intensity over the interpolated data
 *   (Hofmann & Tschakert, 2017).
 * - LTratio: the intensity of the smallest ratio lactate / intensity on a natural-spline fit (Dickhuth et al., 1999).
 *
 * Options (lactater's): `fit` for Log-log's lactate, OBLA, Bsln+ and LTP's lactate: "3rd degree polynomial"
 * (default), "4th degree polynomial" or "B-spline" (a natural cubic spline with 4 degrees of freedom); Dmax,
 * ModDmax and Log-Poly-ModDmax always use the cubic, Exp-Dmax and Log-Exp-ModDmax the exponential, LTratio the
 * spline, as in lactater. `includeBaseline` (default false) adds the resting sample to the user-chosen fit, the
 * interpolated data (Log-log, LTP) and LTratio's spline. `sport` sets the interpolation grid, `loglogRestrainer`
 * (0–1, default 1) keeps that leading fraction of the interpolated data for Log-log. The fits are in
 * lactate-fits.ts, the broken lines in lactate-breakpoints.ts, the Dmax family in lactate-dmax.ts, the types,
 * data preparation and Log-log breakpoint in lactate-data.ts.
 *
 * Decided here, where lactater leaves it open or where this service differs:
 * - Intensity and lactate are returned unrounded (lactater rounds them for printing); the two Log-ModDmax
 *   methods do use the Log-log point rounded as lactater rounds it (intensity to 1, 2 or 3 decimals for
 *   cycling, running, swimming; lactate to 0.1 mmol/L), since lactater computes from the rounded values.
 * - Interpolation grid: 0.1 W for cycling, 0.1 km/h (1/36 m/s) for running, 0.01 m/s for swimming; lactater's
 *   0.1 for running is in the unit of its data, which this service gives in m/s. `gridStep` overrides it.
 * - Heart rate: by default interpolated linearly between the exercise steps that have one, and left out
 *   outside them (never extrapolated); `heartRate: "regression"` gives lactater's own value instead, a straight
 *   line fitted to heart rate against intensity over the exercise steps, rounded to a whole bpm.
 * - Without a resting sample (no first step at intensity 0), Bsln+ does not apply and `includeBaseline` has
 *   nothing to add; lactater requires the sample.
 * - Where lactater would return NA or stop with an error (too few steps for the fit, a level the fitted curve
 *   never reaches, no cubic root inside the tested range), the method is returned with a reason instead.
 * - Minimum steps: 4 for the cubic, 5 for the quartic and spline, 4 for the exponential, 3 distinct intensities
 *   for Log-log and 4 for LTP, counted among the points the fit uses.
 * - Log-log and LTP take the least-squares optimum of the broken line (lactate-breakpoints.ts); lactater's
 *   `segmented` stops at a tolerance and restarts from random bootstrap samples, so its breakpoints can differ
 *   by a few hundredths (on lactater's demo data LTP1 is 88.85 W here, 88.9 W there).
 * - The exponential fit is not offered as a user `fit` (lactater's lactate_threshold does not offer it either);
 *   it serves the exponential Dmax methods only. OBLA and Bsln+ read a level off the polynomial fits as lactater
 *   does (interpolating between the fitted values at the steps), off the spline at its highest crossing.
 */
import { type CurveFit, fitNaturalSpline, rSeq } from './lactate-fits.ts';
import { dmaxMethods } from './lactate-dmax.ts';
import { twoBreakpoints } from './lactate-breakpoints.ts';
import {
  interpolateOnGrid,
  type LactateCategory,
  type LactateData,
  type LactateOptions,
  type LactateStep,
  type LactateThreshold,
  loglogPoint,
  pointAt,
  prepareLactate,
  retrieveIntensity,
} from './lactate-data.ts';

export type {
  LactateCategory,
  LactateData,
  LactateFitName,
  LactateOptions,
  LactateSport,
  LactateStep,
  LactateThreshold,
} from './lactate-data.ts';

/** Every method, in lactater's order. */
export function lactateThresholds(steps: readonly LactateStep[], options: LactateOptions = {}): LactateThreshold[] {
  const data = prepareLactate(steps, options);
  return [
    loglogMethod(data),
    ...oblaMethods(data),
    ...bslnPlusMethods(data),
    ...dmaxMethods(data),
    ...ltpMethods(data),
    ltratioMethod(data),
  ];
}

function userFitting(data: LactateData): string {
  return `${data.fitName} (user-defined)`;
}

function loglogMethod(data: LactateData): LactateThreshold {
  const head = { category: 'Log-log' as const, method: 'Log-log', fitting: userFitting(data) };
  if (!data.userFit) return { ...head, reason: data.userFitReason };
  const p = loglogPoint(data);
  if ('reason' in p) return { ...head, reason: p.reason };
  return pointAt(data, head, p.intensity, data.userFit.predict(p.intensity));
}

/** Where the user's fit reaches `level`, as a result. */
function levelMethod(data: LactateData, category: LactateCategory, method: string, level: number): LactateThreshold {
  const head = { category, method, fitting: userFitting(data) };
  if (!data.userFit) return { ...head, reason: data.userFitReason };
  const at = retrieveIntensity(data, data.userFit, level);
  if ('reason' in at) return { ...head, lactate: level, reason: at.reason };
  return pointAt(data, head, at.intensity, level);
}

function oblaMethods(data: LactateData): LactateThreshold[] {
  return [2, 2.5, 3, 3.5, 4].map((level) => levelMethod(data, 'OBLA', `OBLA ${level.toFixed(1)}`, level));
}

function bslnPlusMethods(data: LactateData): LactateThreshold[] {
  return [0.5, 1, 1.5].map((plus) => {
    const method = `Bsln + ${plus.toFixed(1)}`;
    if (!data.baseline)
      return { category: 'Bsln+', method, fitting: userFitting(data), reason: 'no resting sample (a first step at intensity 0)' };
    return levelMethod(data, 'Bsln+', method, data.baseline.lactate + plus);
  });
}

function ltpMethods(data: LactateData): LactateThreshold[] {
  const heads = ['LTP1', 'LTP2'].map((method) => ({ category: 'LTP' as const, method, fitting: userFitting(data) }));
  const fit: CurveFit | undefined = data.userFit;
  if (!fit) return heads.map((h) => ({ ...h, reason: data.userFitReason }));
  const grid = interpolateOnGrid(data);
  const psi = grid.modelCount >= 4 ? twoBreakpoints(grid.x, grid.y) : undefined;
  if (!psi) return heads.map((h) => ({ ...h, reason: `LTP needs at least 4 steps to fit, got ${grid.modelCount}` }));
  return heads.map((h, i) => pointAt(data, h, psi[i]!, fit.predict(psi[i]!)));
}

function ltratioMethod(data: LactateData): LactateThreshold {
  const head = { category: 'LTratio' as const, method: 'LTratio', fitting: 'B-Spline (default)' };
  if (data.modelX.length < 5) return { ...head, reason: `LTratio's spline needs at least 5 steps, got ${data.modelX.length}` };
  const fit = fitNaturalSpline(data.modelX, data.modelY);
  const xs = rSeq(Math.min(...data.modelX), Math.max(...data.modelX), data.gridStep);
  let best = -1;
  let bestRatio = Number.POSITIVE_INFINITY;
  for (let i = 0; i < xs.length; i++) {
    const ratio = fit.predict(xs[i]!) / xs[i]!;
    if (xs[i]! > 0 && ratio < bestRatio) [best, bestRatio] = [i, ratio];
  }
  if (best < 0) return { ...head, reason: 'no positive intensity on the grid' };
  return pointAt(data, head, xs[best]!, fit.predict(xs[best]!));
}
