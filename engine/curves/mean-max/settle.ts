/**
 * Settling blocks, and the full scans (steps 2 and 3 of mean-max.ts): where windows are summed and
 * the running best is decided.
 *
 * Invariant: after `wake` (or a scan) for a cut at duration d, the running best is the earliest
 * window with the greatest sum among the cut's own starts and the later suffix's best it started
 * from; or, with a floor, it is that window whenever that window is above the cut's bar.
 *
 * Why exact. Let i* be the earliest window with the greatest sum at d. The running best is always a
 * real window (state.ts), so its sum never exceeds sum(i*). i*'s block is not asleep: a sleep proves
 * its sums below the best, or, for a block after the best's start, at most equal to a window starting
 * earlier (sleep.ts); or no greater than a window p earlier, or smaller once rounded than one p later
 * (repeats.ts); or not above the bar (floors.ts); none of which i* is. So it wakes by d. Its bounds
 * (bound.ts) are ≥ sum(i*) ≥ the running best, and an equal bound does not rule out a block holding
 * a start earlier than the running best's; so its leaf is summed, i* wins (greater, or equal and
 * earlier), and nothing replaces it. Every comparison below is that one: greater wins, equal wins
 * only at an earlier start.
 *
 * The full scans are the plain scan over the cut's own starts, all of them earlier than the later
 * suffix's best they start from (`scanAll`), or that scan skipping the blocks a bound with no tables
 * rules out (`scanCoarse`).
 */

import { dominatedUntil } from './repeats.ts';
import { asleep, periodicSleep, periodicSleepPays, type Sleepers } from './sleep.ts';
import { GEOMETRY, type Kernel } from './state.ts';

const { B, L, LOG_B, LOG_L } = GEOMETRY; // (own constants: state.ts, GEOMETRY)

/**
 * Settles every block of cut j due by duration d (its lists since the last call) over the cut's own
 * starts lo..last (those beyond `last` hold no window of d: the block is done), then puts each back
 * to sleep for as long as it cannot reach the bar: the running best, or the floor's `bar` when
 * higher (a block whose bound is below it cannot be reported), or for as long as a shift rules it out.
 */
export function wake(
  t: Kernel,
  q: Sleepers,
  j: number,
  d: number,
  lo: number,
  last: number,
  bar: number,
  barInv: number,
  barEnd: number,
  bound: boolean,
): void {
  const { n, P, W, minQ, WL, minQL, tol, shifts } = t;
  const { head, next } = q;
  const floorKnown = barInv === barInv; // (not NaN)
  const base = j * (n + 2);
  const links = j * q.nb;
  const ad = t.a * d + tol;
  // The template's term: G[d mod p][s mod p] (all 0 without one).
  const { p, columns, GB, GL, blockPhase, leafPhase } = t.tpl;
  const dp = d % p;
  const row = dp * columns;
  const repeats = shifts.length > 0;
  const inv = q.inv;
  let bs = t.bs;
  let bi = t.bi;
  let summed = 0;
  let wakes = 0;
  for (let w = q.drained[j]! + 1; w <= d; w++) {
    let b = head[base + w]!;
    head[base + w] = -1;
    while (b >= 0) {
      const after = next[links + b]!;
      const s = b << LOG_B;
      const i0 = s > lo ? s : lo;
      const i1 = s + B - 1 < last ? s + B - 1 : last;
      if (i0 <= i1) {
        wakes++;
        // `top`: the block's best sum, or a bound on it; where the block's bound does not rule it
        // out, a shift may (it sleeps until that ends); else each leaf's bound, and where that
        // does not either, the leaf's windows summed.
        let top = bound ? ad + (p === 1 ? 0 : GB[row + blockPhase[b]!]!) + W[s + d]! - minQ[b]! : Infinity;
        const open = top > bar && (top > bs || (top === bs && i0 < bi));
        let wakeAt = repeats && open ? dominatedUntil(shifts, i0, i1, d, lo, n, t.ulp) : d;
        if (wakeAt === d) {
          if (open) {
            top = -Infinity;
            for (let ls = (i0 >> LOG_L) << LOG_L; ls <= i1; ls += L) {
              const l0 = ls > i0 ? ls : i0;
              const l1 = ls + L - 1 < i1 ? ls + L - 1 : i1;
              let leaf = bound ? ad + (p === 1 ? 0 : GL[row + leafPhase[ls >> LOG_L]!]!) + WL[ls + d]! - minQL[ls >> LOG_L]! : Infinity;
              if (leaf > bar && (leaf > bs || (leaf === bs && l0 < bi))) {
                summed += l1 - l0 + 1;
                leaf = P[l0 + d]! - P[l0]!;
                for (let i = l0 + 1; i <= l1; i++) {
                  const sum = P[i + d]! - P[i]!;
                  if (sum > leaf) leaf = sum;
                }
                if (leaf > bs || (leaf === bs && l0 < bi)) {
                  let i = l0;
                  while (P[i + d]! - P[i]! !== leaf) i++; // the leaf's earliest best
                  if (leaf > bs || i < bi) {
                    bs = leaf;
                    bi = i;
                  }
                }
              }
              if (leaf > top) top = leaf;
            }
          }
          // Asleep for as many durations as the block cannot reach the best — or may reach it,
          // when that is not enough: it starts after the best (the grown best keeps its earlier
          // start) — and as many as it cannot reach the floor, up to the first duration without one.
          const gap = bs - top - tol;
          wakeAt = gap > 0 || (gap === 0 && i0 > bi) ? d + 1 + asleep(t, gap, i0 > bi, inv, s, d) : d + 1;
          if (p > 1 && bound && gap > 0 && bi >= 0 && periodicSleepPays(t)) wakeAt = periodicSleep(t, b, d, dp, bi, lo, wakeAt);
          const floorGap = bar - top - tol;
          if (floorKnown && floorGap >= 0) {
            const onFloor = Math.min(d + 1 + asleep(t, floorGap, true, barInv, s, d), barEnd);
            if (onFloor > wakeAt) wakeAt = onFloor;
          }
        }
        // Back to sleep while it still holds a start of a window of wakeAt; else it is done.
        if (i0 <= n - wakeAt) {
          next[links + b] = head[base + wakeAt]!;
          head[base + wakeAt] = b;
        }
      }
      b = after;
    }
  }
  q.drained[j] = d;
  t.bs = bs;
  t.bi = bi;
  t.summed += summed;
  t.wakes += wakes;
}

/**
 * A scan over starts lo..hi that skips the blocks a bound needing no tables rules out: with x ≥ min x,
 * Q[k] = P[k] − min(x)·k never falls, so every window of a block's starts i0..i1 sums at most
 * Q[i1+d] − Q[i0] + min(x)·d = P[i1+d] − P[i0] − min(x)·(i1 − i0): the block's span of d+B−1
 * samples, less its B−1 smallest possible. Good against long windows, none against short ones.
 */
export function scanCoarse(t: Kernel, d: number, lo: number, hi: number, bar: number): void {
  const { P, minX, tol } = t;
  let bs = t.bs;
  let bi = t.bi;
  for (let s = (lo >> LOG_B) << LOG_B; s <= hi; s += B) {
    const i0 = s > lo ? s : lo;
    const i1 = s + B - 1 < hi ? s + B - 1 : hi;
    const top = P[i1 + d]! - P[i0]! - minX * (i1 - i0) + tol;
    if (top <= bar || top < bs || (top === bs && !(i0 < bi))) continue;
    for (let i = i0; i <= i1; i++) {
      const sum = P[i + d]! - P[i]!;
      if (sum > bs || (sum === bs && i < bi)) {
        bs = sum;
        bi = i;
      }
    }
  }
  t.bs = bs;
  t.bi = bi;
}

/**
 * The plain scan over starts lo..hi, every start earlier than the running best's (the later
 * suffix's, or none): an equal sum wins until the first win, a greater one after it.
 */
export function scanAll(t: Kernel, d: number, lo: number, hi: number): void {
  const P = t.P;
  let bs = t.bs;
  let bi = t.bi;
  let i = lo;
  if (bi >= 0) {
    for (; i <= hi; i++) {
      const s = P[i + d]! - P[i]!;
      if (s >= bs) {
        bs = s;
        bi = i++;
        break;
      }
    }
  }
  for (; i <= hi; i++) {
    const s = P[i + d]! - P[i]!;
    if (s > bs) {
      bs = s;
      bi = i;
    }
  }
  t.bs = bs;
  t.bi = bi;
}
