/**
 * The Dmax family of lactate thresholds for engine/tests/lactate.ts (which states each method), as the R
 * package lactater (Maturana et al., 2021; GitHub fmmattioni/lactater) computes them: Dmax, ModDmax, Exp-Dmax,
 * Log-Poly-ModDmax and Log-Exp-ModDmax, always on the exercise steps without the resting sample.
 *
 * The polynomial variants fit a cubic and take the intensities where its slope equals the line's slope (the
 * real parts of the derivative's roots, as lactater takes `Re(polyroot(...))`), keep those above 0 and not
 * above the last step, and take the highest; if the cubic's lactate there (to 0.1 mmol/L) is above 8 mmol/L,
 * the lowest instead (lactater's guard against implausible points). The exponential variants use the closed
 * form ln((e^(c·xf) − e^(c·xi)) / (c·(xf − xi))) / c with c the fitted rate, xi the line's start and xf the
 * last step. Decided here: no root in range, no rise of 0.4 mmol/L (ModDmax), or a flat exponential (c = 0)
 * gives the method a reason instead of lactater's NA or error.
 */
import { fitExponential, fitPolynomial } from './lactate-fits.ts';
import { type LactateData, type LactateThreshold, loglogPoint, pointAt, round } from './lactate-data.ts';

const POLY = '3rd degree polynomial (default)';
const EXP = 'Exponential (default)';
const DIGITS = { cycling: 1, running: 2, swimming: 3 } as const;

type Head = Pick<LactateThreshold, 'category' | 'method' | 'fitting'>;

/** Dmax, ModDmax, Exp-Dmax, Log-Poly-ModDmax and Log-Exp-ModDmax, in lactater's order. */
export function dmaxMethods(data: LactateData): LactateThreshold[] {
  const head = (method: string, fitting: string): Head => ({ category: 'Dmax', method, fitting });
  const x = data.exercise.map((s) => s.intensity);
  const y = data.exercise.map((s) => s.lactate);
  const heads: [Head, Head, Head, Head, Head] = [
    head('Dmax', POLY),
    head('ModDmax', POLY),
    head('Exp-Dmax', EXP),
    head('Log-Poly-ModDmax', POLY),
    head('Log-Exp-ModDmax', EXP),
  ];
  if (x.length < 4) return heads.map((h) => ({ ...h, reason: `the Dmax fits need at least 4 exercise steps, got ${x.length}` }));
  const last = x.length - 1;
  // lactater: the slope from the ranges of lactate and intensity over the exercise steps
  const out = [polyDmax(data, heads[0], (Math.max(...y) - Math.min(...y)) / (Math.max(...x) - Math.min(...x)))];
  let rise = -1;
  for (let i = 0; i < last && rise < 0; i++) if (y[i + 1]! - y[i]! >= 0.4) rise = i;
  if (rise < 0) out.push({ ...heads[1], reason: 'lactate never rises by 0.4 mmol/L or more from one step to the next' });
  else out.push(polyDmax(data, heads[1], (Math.max(...y) - y[rise]!) / (Math.max(...x) - x[rise]!)));
  out.push(expDmax(data, heads[2], x[0]!));
  const ll = loglogRounded(data);
  if ('reason' in ll) {
    out.push({ ...heads[3], reason: ll.reason }, { ...heads[4], reason: ll.reason });
    return out;
  }
  out.push(polyDmax(data, heads[3], (y[last]! - ll.lactate) / (x[last]! - ll.intensity)));
  out.push(expDmax(data, heads[4], ll.intensity));
  return out;
}

/** The Log-log point as lactater feeds it to the Log-ModDmax methods: rounded as it prints it. */
function loglogRounded(data: LactateData): { intensity: number; lactate: number } | { reason: string } {
  if (!data.userFit) return { reason: `Log-log: ${data.userFitReason}` };
  const p = loglogPoint(data);
  if ('reason' in p) return p;
  return { intensity: round(p.intensity, DIGITS[data.sport]), lactate: round(data.userFit.predict(p.intensity), 1) };
}

/** Where the cubic on the exercise steps has slope `slope`, per the header. */
function polyDmax(data: LactateData, head: Head, slope: number): LactateThreshold {
  const x = data.exercise.map((s) => s.intensity);
  const cubic = fitPolynomial(
    x,
    data.exercise.map((s) => s.lactate),
    3,
  );
  const top = Math.max(...x);
  const roots = cubic.slopeRoots(slope).filter((r) => r > 0 && r <= top);
  if (roots.length === 0) return { ...head, reason: 'the cubic has no point of the line slope within the steps' };
  let at = Math.max(...roots);
  if (round(cubic.predict(at), 1) > 8) at = Math.min(...roots);
  return pointAt(data, head, at, cubic.predict(at));
}

/** Exp-Dmax from the line starting at intensity `start` to the last step. */
function expDmax(data: LactateData, head: Head, start: number): LactateThreshold {
  const x = data.exercise.map((s) => s.intensity);
  const fit = fitExponential(
    x,
    data.exercise.map((s) => s.lactate),
  );
  const end = x[x.length - 1];
  const c = fit.c;
  const at = Math.log((Math.exp(c * end!) - Math.exp(c * start)) / (c * end! - c * start)) / c;
  if (!Number.isFinite(at)) return { ...head, reason: 'the exponential fit is flat (no rate to place Dmax)' };
  return pointAt(data, head, at, fit.predict(at));
}
