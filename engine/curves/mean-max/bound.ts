/**
 * The block bound (step 3 of mean-max.ts): a number no window of a block (or of a leaf) can beat at
 * duration d, from tables built once per slope instead of per duration.
 *
 * Invariant: for every start i of the block (or leaf) [s, s+w), and every duration d,
 *
 *     P[i+d] − P[i]  ≤  a·d + G[d mod p][s mod p] + max Q[s+d .. s+d+w) − min Q[s .. s+w)  (+ tol)
 *
 * Why: for any slope a and any p values Z (Zk = Z[k mod p]), Q[k] = P[k] − a·k − Zk gives, exactly,
 * P[i+d] − P[i] = a·d + (Z[(i+d) mod p] − Z[i mod p]) + Q[i+d] − Q[i]. The Z term is at most the
 * template's G over the block's phases (template.ts), Q[i+d] is at most Q's maximum over the block's
 * ends and Q[i] at least its minimum over its starts. Nothing here depends on a or Z being good: a
 * stale slope or a poor template only loosens the bound, never breaks it, which is why the tables are
 * rebuilt only when the best mean has drifted far from a (DRIFT; a handful of times per series) and
 * the template is found once. Without a template p = 1 and G = 0. The computed bound's rounding is
 * covered by `tol` (state.ts, where it is derived), added to a·d.
 *
 * When it is tight: with a near the best mean, Q is nearly flat and the bound is the block's best sum
 * plus Q's wobble inside two blocks. On a periodic signal Q swings by the signal inside two blocks
 * and the bound rules nothing out, unless Z takes the signal's periodic part (template.ts): then Q is
 * the noise, and windows one period apart are told apart by it.
 *
 * The tables (`retune`): W[k] = max Q[k .. k+B) and WL over L positions (sliding maxima, van Herk /
 * Gil-Werman), minQ and minQL per aligned block and leaf; O(n) per slope. The bound itself is read in
 * the hot loop of settle.ts (`wake`): ad + G + W[s+d] − minQ[b] per block, the same with WL and minQL
 * per leaf.
 */

import { f64, GEOMETRY, type Kernel } from './state.ts';

const { L, LOG_B, LOG_L } = GEOMETRY; // (own constants: state.ts, GEOMETRY)

/** Rebuild the bound when the best mean is further than this × mean |x| (× d / 512 beyond 512 s) from its slope. */
const DRIFT = 0.2;

/** Rebuilds Q's block minima and sliding maxima (per block and per leaf) for a slope near `mean`, when the slope in use has drifted too far from it. */
export function retune(t: Kernel, mean: number, d: number): void {
  // With a template the slope is the series' own mean, once: Q is then the noise's running sum (template.ts).
  if (t.built && t.tpl.p > 1) return;
  const target = t.tpl.p > 1 ? t.P[t.n]! / t.n : Math.min(Math.max(mean, t.minX), t.maxX);
  if (t.built && Math.abs(target - t.a) <= DRIFT * t.meanAbs * Math.max(1, d / 512)) return;
  const a = t.exact ? Math.round(target * 256) / 256 : target;
  const { n, P } = t;
  if (!t.built) {
    t.W = f64('W', n + 1);
    t.WL = f64('WL', n + 1);
    t.minQ = f64('minQ', (n >> LOG_B) + 1);
    t.minQL = f64('minQL', (n >> LOG_L) + 1);
  }
  const { W, WL, minQ, minQL } = t;
  const { p, Z } = t.tpl;
  // Q itself first (in W, overwritten below), then WL by van Herk / Gil-Werman: the suffix maximum
  // from k inside k's aligned leaf (and the leaf's minimum), then the prefix maximum up to k+L−1
  // inside the next one; a block's from two leaves'.
  let up = 0;
  for (let k = 0, φ = 0; k <= n; k++) {
    W[k] = P[k]! - a * k - Z[φ]!;
    if (k > 0 && W[k]! - W[k - 1]! > up) up = W[k]! - W[k - 1]!;
    if (++φ === p) φ = 0;
  }
  t.qUp = p > 1 ? up : Infinity;
  for (let s = 0, l = 0; s <= n; s += L, l++) {
    let hi = -Infinity;
    let lo = Infinity;
    for (let k = Math.min(s + L - 1, n); k >= s; k--) {
      const q = W[k]!;
      if (q > hi) hi = q;
      if (q < lo) lo = q;
      WL[k] = hi;
    }
    minQL[l] = lo;
  }
  let hi = -Infinity;
  for (let e = L; e < n + L; e++) {
    if ((e & (L - 1)) === 0) hi = -Infinity;
    if (e <= n) {
      const q = W[e]!;
      if (q > hi) hi = q;
    } // (past n: the window is cut at n)
    if (hi > WL[e - L + 1]!) WL[e - L + 1] = hi;
  }
  for (let k = 0; k <= n - L; k++) W[k] = WL[k + L]! > WL[k]! ? WL[k + L]! : WL[k]!;
  for (let k = Math.max(0, n - L + 1); k <= n; k++) W[k] = WL[k]!;
  for (let b = 0; b < minQ.length; b++)
    minQ[b] = 2 * b + 1 < minQL.length && minQL[2 * b + 1]! < minQL[2 * b]! ? minQL[2 * b + 1]! : minQL[2 * b]!;
  t.a = a;
  t.built = true;
}
