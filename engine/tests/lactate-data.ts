/**
 * The types and prepared data of a lactate step test for engine/tests/lactate.ts (which states the methods and
 * what is decided where): the resting sample split from the exercise steps, the points each fit uses, the
 * user-chosen fit, the fine interpolation grid, reading an intensity off a fitted curve, the heart rate at an
 * intensity, and the Log-log breakpoint (used by Log-log and by the Log-ModDmax methods).
 * As in the R package lactater (Maturana et al., 2021; GitHub fmmattioni/lactater):
 * - the resting sample (first step at intensity 0) is placed one step increment below the first exercise step;
 * - the intensity at which a polynomial fit reaches a lactate level is read by linear interpolation between the
 *   fitted values at the fitted steps (R `approx` with ties "ordered"); when that fails because the fitted
 *   curve dips and rises again, only the part after its last dip is used; for the spline, the highest
 *   intensity where the fitted curve crosses the level.
 */
import { approxOrdered, type CurveFit, fitNaturalSpline, fitPolynomial, leastSquares, rSeq } from './lactate-fits.ts';
import { oneBreakpoint } from './lactate-breakpoints.ts';

/** One step of the test: intensity (W or speed), lactate (mmol/L), heart rate (bpm) where recorded. */
export interface LactateStep {
  intensity: number;
  lactate: number;
  heartRate?: number;
}

export type LactateFitName = '3rd degree polynomial' | '4th degree polynomial' | 'B-spline';
export type LactateSport = 'cycling' | 'running' | 'swimming';

export interface LactateOptions {
  fit?: LactateFitName;
  includeBaseline?: boolean;
  sport?: LactateSport;
  loglogRestrainer?: number;
  heartRate?: 'interpolate' | 'regression';
  gridStep?: number;
}

export type LactateCategory = 'Log-log' | 'OBLA' | 'Bsln+' | 'Dmax' | 'LTP' | 'LTratio';

/** One threshold: a point on the curve, or the reason the method does not apply. */
export interface LactateThreshold {
  category: LactateCategory;
  method: string;
  fitting: string;
  intensity?: number;
  lactate?: number;
  heartRate?: number;
  reason?: string;
}

export interface LactateData {
  baseline?: { lactate: number; heartRate?: number };
  /** The exercise steps (the resting sample removed). */
  exercise: LactateStep[];
  /** The points the user-chosen fit, the interpolated data and LTratio use (resting sample if includeBaseline). */
  modelX: number[];
  modelY: number[];
  fitName: LactateFitName;
  userFit?: CurveFit;
  userFitReason: string;
  sport: LactateSport;
  gridStep: number;
  loglogRestrainer: number;
  heartRateMode: 'interpolate' | 'regression';
}

const GRID: Record<LactateSport, number> = { cycling: 0.1, running: 0.1 / 3.6, swimming: 0.01 };
const MIN_POINTS: Record<LactateFitName, number> = {
  '3rd degree polynomial': 4,
  '4th degree polynomial': 5,
  'B-spline': 5,
};

/** Splits and checks the steps, and fits the user's curve. Throws on intensities that do not increase. */
export function prepareLactate(steps: readonly LactateStep[], options: LactateOptions): LactateData {
  for (let i = 1; i < steps.length; i++)
    if (!(steps[i]!.intensity > steps[i - 1]!.intensity)) throw new RangeError('step intensities must increase');
  for (const s of steps) if (!Number.isFinite(s.intensity) || !Number.isFinite(s.lactate)) throw new RangeError('non-finite step');
  const hasBaseline = steps.length > 0 && steps[0]!.intensity === 0;
  const exercise = hasBaseline ? steps.slice(1) : [...steps];
  const fitName = options.fit ?? '3rd degree polynomial';
  const restrainer = options.loglogRestrainer ?? 1;
  if (!(restrainer >= 0 && restrainer <= 1)) throw new RangeError('loglogRestrainer must be within 0 to 1');
  const data: LactateData = {
    exercise,
    modelX: exercise.map((s) => s.intensity),
    modelY: exercise.map((s) => s.lactate),
    fitName,
    userFitReason: '',
    sport: options.sport ?? 'cycling',
    gridStep: options.gridStep ?? GRID[options.sport ?? 'cycling'],
    loglogRestrainer: restrainer,
    heartRateMode: options.heartRate ?? 'interpolate',
  };
  if (hasBaseline) {
    data.baseline = { lactate: steps[0]!.lactate };
    if (steps[0]!.heartRate !== undefined) data.baseline.heartRate = steps[0]!.heartRate;
    if (options.includeBaseline && exercise.length >= 2) {
      data.modelX.unshift(2 * exercise[0]!.intensity - exercise[1]!.intensity);
      data.modelY.unshift(steps[0]!.lactate);
    }
  }
  const need = MIN_POINTS[fitName];
  if (data.modelX.length < need) data.userFitReason = `the ${fitName} fit needs at least ${need} steps, got ${data.modelX.length}`;
  else
    data.userFit =
      fitName === 'B-spline'
        ? fitNaturalSpline(data.modelX, data.modelY)
        : fitPolynomial(data.modelX, data.modelY, fitName === '4th degree polynomial' ? 4 : 3);
  return data;
}

/** The modelled points linearly interpolated on the grid (R: approx at seq(min, max, step)). */
export function interpolateOnGrid(data: LactateData): { x: number[]; y: number[]; modelCount: number } {
  const n = data.modelX.length;
  if (n < 2) return { x: [], y: [], modelCount: n };
  const x = rSeq(data.modelX[0]!, data.modelX[n - 1]!, data.gridStep);
  return { x, y: x.map((v) => approxOrdered(data.modelX, data.modelY, v)), modelCount: n };
}

/** The intensity at which `fit` (fitted on data.modelX) reaches `level`, or why it does not. */
export function retrieveIntensity(data: LactateData, fit: CurveFit, level: number): { intensity: number } | { reason: string } {
  const f = fit.fitted;
  if (level > Math.max(...f) || level < Math.min(...f))
    return { reason: `the fitted curve does not reach ${round(level, 2)} mmol/L within the steps` };
  if (data.fitName === 'B-spline') return splineCrossing(data, fit, level);
  const x = data.modelX;
  let v = approxOrdered(f, x, level);
  if (Number.isNaN(v)) {
    let lastDip = -1;
    for (let i = 1; i < f.length; i++) if (f[i]! - f[i - 1]! < 0) lastDip = i;
    if (lastDip >= 0) v = approxOrdered(f.slice(lastDip), x.slice(lastDip), level);
  }
  if (Number.isNaN(v)) return { reason: `the fitted curve does not rise through ${round(level, 2)} mmol/L` };
  return { intensity: v };
}

/** The highest intensity on the fitting range where the spline crosses `level` (grid scan, then bisection). */
function splineCrossing(data: LactateData, fit: CurveFit, level: number): { intensity: number } | { reason: string } {
  const xs = rSeq(Math.min(...data.modelX), Math.max(...data.modelX), data.gridStep);
  for (let i = xs.length - 1; i > 0; i--) {
    let lo = xs[i - 1]!;
    let hi = xs[i]!;
    const flo = fit.predict(lo) - level;
    const fhi = fit.predict(hi) - level;
    if (fhi === 0) return { intensity: hi };
    if (flo * fhi > 0) continue;
    for (let k = 0; k < 60; k++) {
      const mid = (lo! + hi!) / 2;
      if ((fit.predict(mid) - level) * flo > 0) lo = mid;
      else hi = mid;
    }
    return { intensity: (lo! + hi!) / 2 };
  }
  return { reason: `the fitted curve does not cross ${round(level, 2)} mmol/L` };
}

/** Heart rate at an intensity (see lactate.ts: interpolated, or lactater's regression), undefined without one. */
export function heartRateAt(data: LactateData, intensity: number): number | undefined {
  const hr = data.exercise.filter((s) => s.heartRate !== undefined && Number.isFinite(s.heartRate));
  if (hr.length === 0) return undefined;
  if (data.heartRateMode === 'regression') {
    if (hr.length < 2) return undefined;
    const [a, b] = leastSquares(
      hr.map((s) => [1, s.intensity]),
      hr.map((s) => s.heartRate as number),
    );
    return Math.round(a! + b! * intensity);
  }
  const v = approxOrdered(
    hr.map((s) => s.intensity),
    hr.map((s) => s.heartRate as number),
    intensity,
  );
  return Number.isNaN(v) ? undefined : v;
}

/** x rounded to `digits` decimals. */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A result at an intensity with its lactate, and heart rate where there is one. */
export function pointAt(
  data: LactateData,
  head: Pick<LactateThreshold, 'category' | 'method' | 'fitting'>,
  intensity: number,
  lactate: number,
): LactateThreshold {
  const out: LactateThreshold = { ...head, intensity, lactate };
  const hr = heartRateAt(data, intensity);
  if (hr !== undefined) out.heartRate = hr;
  return out;
}

/** The Log-log breakpoint (intensity), or a reason; shared with the Log-ModDmax methods. */
export function loglogPoint(data: LactateData): { intensity: number } | { reason: string } {
  const grid = interpolateOnGrid(data);
  if (grid.modelCount < 3) return { reason: `Log-log needs at least 3 steps to fit, got ${grid.modelCount}` };
  const rows: [number, number][] = [];
  for (let i = 0; i < grid.x.length; i++) if (grid.x[i]! > 0) rows.push([grid.x[i]!, grid.y[i]!]);
  if (rows.some(([, y]) => !(y > 0))) return { reason: 'Log-log needs lactate above 0 at every step' };
  const kept = rows.slice(0, Math.floor(data.loglogRestrainer * rows.length + 1e-10));
  const psi = oneBreakpoint(
    kept.map(([x]) => Math.log(x)),
    kept.map(([, y]) => Math.log(y)),
  );
  if (psi === undefined) return { reason: 'Log-log: too few points left for a breakpoint' };
  return { intensity: Math.exp(psi) };
}
