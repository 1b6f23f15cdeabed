import { levelValue } from './levels.ts';
import type { LevelCurve } from './longitudinal.ts';

/**
 * The intensity-duration model of the profile endpoint: the 3-parameter critical power model
 * (Morton 1996), fitted to a user's best efforts (duration, value) by least squares.
 *
 *   P(t) = (W'·Pmax + t·CP·(Pmax − CP)) / (W' + t·(Pmax − CP))
 *        = CP + W'·D / (W' + t·D)            with D = Pmax − CP > 0
 *
 * P(0) = Pmax, P decreases to CP as t → ∞, and for long t it approaches the 2-parameter model
 * CP + W'/t. For speed the same family gives critical speed and D' (metres) in place of CP and W'.
 *
 * fitCriticalPower(durations, values): minimises Σ (P(t_i) − y_i)² (unweighted, in the metric's
 * unit) with Levenberg–Marquardt (Marquardt's diagonal scaling, analytic Jacobian, 3×3 normal
 * equations solved by Gaussian elimination with partial pivoting).
 *
 * Decided here:
 * - Constraints 0 < CP < Pmax and W' > 0 hold by construction: the solver works on
 *   θ = (ln CP, ln D, ln W'), so every iterate is admissible and the problem is unconstrained.
 * - Start values from the data: Pmax ≈ the highest value; CP and W' from a 2-parameter fit
 *   y = CP + W'·(1/t) (linear least squares in 1/t) on the points of ≥ 120 s when there are ≥ 2 of
 *   them and it gives 0 < CP < Pmax and W' > 0; otherwise CP ≈ the value at the longest duration
 *   (kept below Pmax) and W' ≈ max over points of (y_i − CP)·t_i (which approaches W' from below).
 * - Points with a non-finite or non-positive duration or a non-finite value are skipped; `points`
 *   is the number used. The fit is undefined (returns undefined) with fewer than 3 points or fewer
 *   than 3 distinct durations, when the highest value is ≤ 0, when the values are constant (the
 *   curvature that separates CP, W' and Pmax is absent), or when the solver does not end on finite
 *   parameters with D and W' above 1e-9 of the data's scale and the time constant τ = W'/D (the
 *   duration at which P − CP has halved) within [shortest duration / 1000, longest · 1000]: outside
 *   it the model is flat over every point (e.g. values rising with duration drive W' → ∞, a constant
 *   at Pmax), a degenerate optimum.
 * - `rmse` = √(Σ residual² / points) of the fitted model, in the metric's unit.
 * - Stopping: a relative decrease of the sum of squares below 1e-12 on an accepted step with the
 *   step below 1e-10 in θ, λ beyond 1e10 (no further descent possible), or 500 iterations.
 */

export interface CriticalPowerParameters {
  /** Critical power (W) or critical speed (m/s): the asymptote for long durations. */
  cp: number;
  /** W' (J) or D' (m): the work above CP available at once. */
  wPrime: number;
  /** Pmax: the model's value at t = 0. */
  pmax: number;
}

export interface CriticalPowerFit extends CriticalPowerParameters {
  /** Root-mean-square residual of the fit, in the metric's unit. */
  rmse: number;
  /** The number of (duration, value) points used. */
  points: number;
}

/** The model's values at the given durations (s). */
export function modelCurve(params: CriticalPowerParameters, durations: ArrayLike<number>): Float64Array {
  const { cp, wPrime: w, pmax } = params;
  const dp = pmax - cp;
  const out = new Float64Array(durations.length);
  for (let i = 0; i < durations.length; i++) {
    const t = durations[i]!;
    out[i] = cp + (w * dp) / (w + t * dp);
  }
  return out;
}

const MAX_ITERATIONS = 500;

/** Least-squares 3-parameter critical power fit (see the header); undefined when it is not determined. */
export function fitCriticalPower(durations: Float64Array, values: Float64Array): CriticalPowerFit | undefined {
  // The usable points, by ascending duration.
  const pairs: [number, number][] = [];
  const m = Math.min(durations.length, values.length);
  for (let i = 0; i < m; i++) {
    const t = durations[i]!;
    const y = values[i]!;
    if (Number.isFinite(t) && t > 0 && Number.isFinite(y)) pairs.push([t, y]);
  }
  pairs.sort((a, b) => a[0] - b[0]);
  const n = pairs.length;
  if (n < 3) return undefined;
  let distinct = 1;
  for (let i = 1; i < n; i++) if (pairs[i]![0] !== pairs[i - 1]![0]) distinct++;
  if (distinct < 3) return undefined;
  const t = Float64Array.from(pairs, (p) => p[0]);
  const y = Float64Array.from(pairs, (p) => p[1]);
  let yMax = -Infinity;
  let yMin = Infinity;
  for (let i = 0; i < n; i++) {
    if (y[i]! > yMax) yMax = y[i]!;
    if (y[i]! < yMin) yMin = y[i]!;
  }
  if (!(yMax > 0) || yMax - yMin <= 1e-9 * yMax) return undefined;

  const start = startValues(t, y, yMax);
  let theta = [Math.log(start.cp), Math.log(start.pmax - start.cp), Math.log(start.wPrime)] as [number, number, number];
  let sse = sumOfSquares(t, y, theta);
  if (!Number.isFinite(sse)) return undefined;
  let lambda = 1e-3;
  const r = new Float64Array(n);
  const jac = [new Float64Array(n), new Float64Array(n), new Float64Array(n)] as const;
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    // Residuals and the Jacobian with respect to θ at the current point.
    const cp = Math.exp(theta[0]);
    const dp = Math.exp(theta[1]);
    const w = Math.exp(theta[2]);
    for (let i = 0; i < n; i++) {
      const den = w + t[i]! * dp;
      r[i] = cp + (w * dp) / den - y[i]!;
      jac[0][i] = cp; // ∂P/∂ln CP
      jac[1][i] = (dp * w * w) / (den * den); // ∂P/∂ln D
      jac[2][i] = (w * t[i]! * dp * dp) / (den * den); // ∂P/∂ln W'
    }
    const a = [0, 0, 0, 0, 0, 0, 0, 0, 0];
    const g = [0, 0, 0];
    for (let p = 0; p < 3; p++) {
      const jp = jac[p]!;
      for (let q = 0; q <= p; q++) {
        const jq = jac[q]!;
        let s = 0;
        for (let i = 0; i < n; i++) s += jp[i]! * jq[i]!;
        a[p * 3 + q] = s;
        a[q * 3 + p] = s;
      }
      let s = 0;
      for (let i = 0; i < n; i++) s += jp[i]! * r[i]!;
      g[p] = -s;
    }
    // Marquardt: raise λ until a step lowers the sum of squares.
    let accepted = false;
    let converged = false;
    while (lambda <= 1e10) {
      const damped = a.slice();
      for (let p = 0; p < 3; p++) damped[p * 4] = a[p * 4]! * (1 + lambda) + 1e-300;
      const step = solve3(damped, g);
      if (step !== undefined) {
        const next = [theta[0] + step[0], theta[1] + step[1], theta[2] + step[2]] as [number, number, number];
        const nextSse = sumOfSquares(t, y, next);
        if (nextSse < sse) {
          const decrease = (sse - nextSse) / sse;
          const size = Math.max(Math.abs(step[0]), Math.abs(step[1]), Math.abs(step[2]));
          theta = next;
          sse = nextSse;
          lambda = Math.max(lambda / 3, 1e-12);
          accepted = true;
          converged = decrease < 1e-12 && size < 1e-10;
          break;
        }
      }
      lambda *= 4;
    }
    if (!accepted || converged || sse === 0) break;
  }

  const cp = Math.exp(theta[0]);
  const dp = Math.exp(theta[1]);
  const wPrime = Math.exp(theta[2]);
  const pmax = cp + dp;
  const scale = yMax;
  if (![cp, dp, wPrime, pmax, sse].every(Number.isFinite)) return undefined;
  if (!(dp > 1e-9 * scale && wPrime > 1e-9 * scale && cp < pmax)) return undefined;
  // τ = W'/D is the duration at which P − CP has halved; far outside the data the curve is flat
  // over every point (CP + D or CP alone fits) and the parameters are not determined.
  const tau = wPrime / dp;
  if (!(tau >= t[0]! * 1e-3 && tau <= t[n - 1]! * 1e3)) return undefined;
  return { cp, wPrime, pmax, rmse: Math.sqrt(sse / n), points: n };
}

/** Start values for the solver from the data (see the header). */
function startValues(t: Float64Array, y: Float64Array, yMax: number): CriticalPowerParameters {
  const n = t.length;
  const pmax = yMax;
  // 2-parameter fit y = CP + W'·x with x = 1/t, on the points of ≥ 120 s.
  let k = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    if (t[i]! < 120) continue;
    const x = 1 / t[i]!;
    k++;
    sx += x;
    sy += y[i]!;
    sxx += x * x;
    sxy += x * y[i]!;
  }
  const det = k * sxx - sx * sx;
  if (k >= 2 && det > 0) {
    const wPrime = (k * sxy - sx * sy) / det;
    const cp = (sy - wPrime * sx) / k;
    if (wPrime > 0 && cp > 0 && cp < pmax) return { cp, wPrime, pmax };
  }
  let cp = y[n - 1]!;
  if (!(cp > 0 && cp < pmax)) cp = cp > 0 ? 0.9 * pmax : 0.5 * pmax;
  let wPrime = 0;
  for (let i = 0; i < n; i++) wPrime = Math.max(wPrime, (y[i]! - cp) * t[i]!);
  if (!(wPrime > 0)) wPrime = (pmax - cp) * 60;
  return { cp, wPrime, pmax };
}

function sumOfSquares(t: Float64Array, y: Float64Array, theta: readonly [number, number, number]): number {
  const cp = Math.exp(theta[0]);
  const dp = Math.exp(theta[1]);
  const w = Math.exp(theta[2]);
  let s = 0;
  for (let i = 0; i < t.length; i++) {
    const e = cp + (w * dp) / (w + t[i]! * dp) - y[i]!;
    s += e * e;
  }
  return s;
}

/**
 * Solves the 3×3 system a·x = b (row-major a) by Gaussian elimination with partial pivoting; undefined
 * when a is singular. Also used by engine/tests/critical-power.ts.
 */
export function solve3(a: number[], b: number[]): [number, number, number] | undefined {
  const m = [
    [a[0]!, a[1]!, a[2]!, b[0]!],
    [a[3]!, a[4]!, a[5]!, b[1]!],
    [a[6]!, a[7]!, a[8]!, b[2]!],
  ];
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let row = col + 1; row < 3; row++) if (Math.abs(m[row]![col]!) > Math.abs(m[pivot]![col]!)) pivot = row;
    if (!(Math.abs(m[pivot]![col]!) > 0)) return undefined;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    const top = m[col]!;
    for (let row = col + 1; row < 3; row++) {
      const current = m[row]!;
      const f = current[col]! / top[col]!;
      for (let c = col; c < 4; c++) current[c]! -= f * top[c]!;
    }
  }
  const x = [0, 0, 0] as [number, number, number];
  for (let row = 2; row >= 0; row--) {
    const current = m[row]!;
    let s = current[3]!;
    for (let c = row + 1; c < 3; c++) s -= current[c]! * x[c]!;
    x[row] = s / current[row]!;
  }
  return x.every(Number.isFinite) ? x : undefined;
}

/** docs/api-clients.md, "Curves and time series": the model is fitted to the best efforts of 90 days. */
export const MODEL_WINDOW_DAYS = 90;
/** Efforts longer than this are left out of the fit: the critical-power family describes efforts up to about half an hour. */
export const MODEL_LONGEST_EFFORT_SECONDS = 1800;

/**
 * The best-effort envelope as (duration, intensity) points: for each distinct longest duration of
 * the value-indexed curve, the highest level sustained that long (the corners of the staircase),
 * up to MODEL_LONGEST_EFFORT_SECONDS.
 */
export function bestEfforts(curve: LevelCurve, step: number): { durations: Float64Array; values: Float64Array } {
  const durations: number[] = [];
  const values: number[] = [];
  for (let k = curve.duration.length; k >= 1; k--) {
    const d = curve.duration[k - 1]!;
    if (d > MODEL_LONGEST_EFFORT_SECONDS || d < 1) continue;
    if (durations.length && durations[durations.length - 1] === d) continue; // a lower level lasting as long: not a corner
    durations.push(d);
    values.push(levelValue(k, step));
  }
  return { durations: Float64Array.from(durations), values: Float64Array.from(values) };
}
