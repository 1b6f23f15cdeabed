/**
 * The mean-max kernel's shared state: the prefix sums, the facts every bound is built from, the
 * running best, and the working arrays reused from one series to the next.
 *
 * Invariant: the running best (bs, bi) is always a real window's sum, computed exactly as the plain
 * scan computes it, P[bi+d] − P[bi] from the same prefix sums, with bi its start (or −∞ / −1 before
 * the first). Every window enters it through the same comparison, greater wins and equal wins only
 * at an earlier start (`offer`, and the loops of settle.ts), so the best can never be better than
 * the earliest best window i*, and once i* is offered nothing replaces it. That is half of "why
 * exact" (mean-max.ts); the other half is that i* is always offered (settle.ts).
 *
 * The lower bound (`extend`, step 1 of mean-max.ts): the previous duration's best window grown to the
 * new length is a real window containing the old one, so from one duration to the next the best sum
 * falls by at most Δd·min(x). sleep.ts leans on that.
 *
 * The rounding bound, `tol`, derived once (`prepare`). Let u = 2⁻⁵³, M = max|x| and S = n·M. Every
 * number the search compares is built from the computed prefix sums P (never from the exact ones),
 * so the bound's identity (bound.ts) holds in real arithmetic for those P; only the operations that
 * build a bound from them, and the window sums themselves, round. With |a| ≤ M and the template's
 * |Z| ≤ S (template.ts): |P|, |a·k|, |Z| ≤ S, so |Q| ≤ 3S and the template's |G| ≤ 2S; an operation
 * whose result is at most c·S errs by at most c·S·u. Then:
 *
 *   Q[k] = (P[k] − a·k) − Z:     1 + 2 + 3 = 6·S·u off, so a maximum of Q is at most 6·S·u low and
 *                                a minimum at most 6·S·u high;
 *   G = a maximum of Z − Z:      2·S·u low;
 *   a·d + tol:                   S·u + 2·S·u;
 *   (a·d + G) + max Q − min Q:   3 + 6 + 9 = 18·S·u (partial results of at most 3S, 6S, 9S);
 *   a window sum P[i+d] − P[i]:  2·S·u above the real difference.
 *
 * In all at most (12 + 2 + 3 + 18 + 2)·S·u = 37·S·u < 40·n·M·2⁻⁵³, by which a computed bound may fall
 * below a computed sum. tol = 3·n·M·2⁻⁴⁴ is 1,536·n·M·2⁻⁵³, more than 38 times that: the same tol
 * also covers the few more roundings of a sleep's arithmetic (sleep.ts: a gap less tol, steps of a
 * rate that has tol added; the excess's own bound is excessTol), and 1e-300 keeps it above 0 for
 * subnormal series. (n < 2³², so the growth of P's own rounding, (1 + u)ⁿ, is below 1 + 2⁻²⁰ and
 * absorbed in that slack.)
 *
 * Exact case: every sample an integer and S < 2⁴². Then P is exact (integers below 2⁴²), the slope
 * a and Z are rounded to multiples of 1/256 (bound.ts, template.ts), so a·k, Q, G and every partial
 * result up to 6S < 2⁴⁵ are multiples of 1/256 below 2⁴⁵: 53 bits, exact. The last addition, up to
 * 9S, may round only when the bound is above 2⁴⁵, more than any window sums (≤ S), and rounding is
 * monotone, so such a bound stays above every sum and rules nothing out either way. tol = 0, and
 * ties (constant or all-zero power, long equal stretches) are settled exactly.
 *
 * `ulp` is at least the spacing of doubles near any window sum (0 when sums are exact): two real
 * sums further apart than that round apart (repeats.ts).
 */

import { NO_TEMPLATE, type Template } from './template.ts';
import type { Shift } from './repeats.ts';

/**
 * The search's geometry: starts per block B = 2^LOG_B (the unit that sleeps and wakes), and per leaf
 * L = 2^LOG_L (a woken block is bounded again per leaf before any window is summed; B = 2L). The
 * hot modules copy it into constants of their own (`const { B, LOG_B } = GEOMETRY`): V8 reads an
 * imported binding through its cell at every use, even in optimized code, where a module's own
 * constant is folded (bench/README.md, "engine", has what that costs).
 */
export const GEOMETRY = { LOG_B: 5, B: 1 << 5, LOG_L: 4, L: 1 << 4 } as const;

/** A series' prefix sums, the bound for the current slope, and the running best of the search. */
export interface Kernel {
  n: number;
  P: Float64Array;
  /** W[k] = max Q[k .. k+B) ∩ [0, n], Q[k] = P[k] − a·k; WL the same over L positions. */
  W: Float64Array;
  WL: Float64Array;
  /** minQ[b] = min Q[bB .. bB+B) ∩ [0, n]; minQL the same per leaf of L. */
  minQ: Float64Array;
  minQL: Float64Array;
  a: number;
  /** The periodic term of Q (template.ts): Q[k] = P[k] − a·k − Z[k mod p]; NO_TEMPLATE: none. */
  tpl: Template;
  /** With a template: the most Q rises in one step (how much a block's bound can grow per duration beyond its template term). */
  qUp: number;
  /** periodicSleep's calls, and those that slept no longer: it is given up on where it mostly fails. */
  sleepCalls: number;
  sleepFails: number;
  built: boolean;
  /** Added to every bound and taken off every gap: the rounding error's bound (0 when exact). */
  tol: number;
  exact: boolean;
  minX: number;
  maxX: number;
  meanAbs: number;
  /** The most a window's sum gains per duration, but for the excess over it (cap): the cap, or max x. */
  cap: number;
  /** Prefix sums of the samples' excess over the cap (null when there is no cap), and their rounding's bound. */
  excess: Float64Array | null;
  excessTol: number;
  /** The shifts at which the series repeats exactly (repeats.ts); usually none. */
  shifts: Shift[];
  /** At least the spacing of doubles near any window sum (0 when sums are exact): real sums further apart round apart. */
  ulp: number;
  /** The running best: a real window's sum and start (−∞ / −1 before the first). */
  bs: number;
  bi: number;
  /** Windows summed by `wake` for the current duration, and blocks woken. */
  summed: number;
  wakes: number;
}

/**
 * The kernel's working arrays, reused from one series to the next (a thread runs one kernel at a
 * time, and none of them outlives the call): a longitudinal curve runs it once per activity, and
 * fresh arrays cost more in allocation and collection than the pruned search itself. Up to
 * SCRATCH_MAX entries each; longer series allocate.
 */
const scratch = new Map<string, Float64Array | Int32Array>();
const SCRATCH_MAX = 1 << 17;
export function f64(key: string, length: number): Float64Array {
  if (length > SCRATCH_MAX) return new Float64Array(length);
  let a = scratch.get(key);
  if (!(a instanceof Float64Array) || a.length < length)
    scratch.set(key, (a = new Float64Array(Math.min(SCRATCH_MAX, Math.max(length, 2 * (a?.length ?? 0))))));
  return a.subarray(0, length);
}
export function i32(key: string, length: number): Int32Array {
  if (length > SCRATCH_MAX) return new Int32Array(length);
  let a = scratch.get(key);
  if (!(a instanceof Int32Array) || a.length < length)
    scratch.set(key, (a = new Int32Array(Math.min(SCRATCH_MAX, Math.max(length, 2 * (a?.length ?? 0))))));
  return a.subarray(0, length);
}

/** The prefix sums, exactly as the plain scan builds them, and the facts the bounds need. */
export function prepare(samples: Float64Array): Kernel {
  const n = samples.length;
  const P = f64('P', n + 1);
  P[0] = 0;
  let integer = true;
  let minX = Infinity;
  let maxX = -Infinity;
  let sumAbs = 0;
  let maxAbsP = 0;
  for (let i = 0; i < n; i++) {
    const x = samples[i]!;
    P[i + 1] = P[i]! + x;
    if (Math.abs(P[i + 1]!) > maxAbsP) maxAbsP = Math.abs(P[i + 1]!);
    if (x < minX) minX = x;
    if (x > maxX) maxX = x;
    sumAbs += Math.abs(x);
    if (integer && !Number.isInteger(x)) integer = false;
  }
  const maxAbs = n > 0 ? Math.max(-minX, maxX) : 0;
  const exact = integer && n * maxAbs < 2 ** 42;
  const tol = exact ? 0 : 3 * n * maxAbs * 2 ** -44 + 1e-300; // (derived in the module comment)
  return {
    n,
    P,
    W: new Float64Array(0), // (these made at the first rebuild)
    WL: new Float64Array(0),
    minQ: new Float64Array(0),
    minQL: new Float64Array(0),
    a: 0,
    tpl: NO_TEMPLATE,
    qUp: Infinity,
    sleepCalls: 0,
    sleepFails: 0,
    built: false,
    tol,
    exact,
    minX,
    maxX,
    meanAbs: n > 0 ? sumAbs / n : 0,
    cap: maxX, // (capGains sets these when the search starts)
    excess: null,
    excessTol: 0,
    shifts: [],
    ulp: exact ? 0 : 2 * maxAbsP * 2 ** -52 + 2 ** -1074,
    bs: -Infinity,
    bi: -1,
    summed: 0,
    wakes: 0,
  };
}

/** Offers window i to the running best: greater, or equal and earlier, wins. */
function offer(t: Kernel, d: number, i: number): void {
  const s = t.P[i + d]! - t.P[i]!;
  if (s > t.bs || (s === t.bs && i < t.bi)) {
    t.bs = s;
    t.bi = i;
  }
}

/** The lower bound: the previous duration's best window at `p` grown to d (right, left, centred), clamped to starts lo..hi. */
export function extend(t: Kernel, d: number, prevD: number, p: number, lo: number, hi: number): void {
  const grow = d - prevD;
  offer(t, d, Math.min(Math.max(p, lo), hi));
  offer(t, d, Math.min(Math.max(p - grow, lo), hi));
  if (grow > 2) offer(t, d, Math.min(Math.max(p - (grow >> 1), lo), hi));
}
