/**
 * The performance management chart: from each day's training stress, the chronic and acute training
 * loads, their balance and the chronic load's ramp, as GoldenCheetah defines them
 * (src/Metrics/PMCData.cpp):
 *
 *   ctl[d] = stress[d]·(1 − e^(−1/42)) + ctl[d−1]·e^(−1/42)       (chronic load, "fitness")
 *   atl[d] = stress[d]·(1 − e^(−1/7))  + atl[d−1]·e^(−1/7)        (acute load, "fatigue")
 *   tsb[d] = ctl[d−1] − atl[d−1]                                    (balance, "form": shown on the next day)
 *   ramp[d] = ctl[d] − ctl[d−7]                                      (the chronic load's change over 7 days)
 *
 * A day's stress counts on its own day; several activities of a day add up; a day without training
 * has stress 0. Both loads are 0 the day before the first day given, so a caller starts the series at
 * the athlete's first training day (or earlier) and cuts out the range asked for afterwards.
 */

export const CTL_DAYS = 42;
export const ATL_DAYS = 7;
/** The ramp rate's span: the change of the chronic load over this many days. */
export const RAMP_DAYS = 7;

export interface Pmc {
  ctl: Float64Array;
  atl: Float64Array;
  tsb: Float64Array;
  ramp: Float64Array;
}

/** The chart over consecutive days: `stress[d]` is day d's total (0 without training). */
export function performanceManagement(stress: Float64Array): Pmc {
  const n = stress.length;
  const ctl = new Float64Array(n);
  const atl = new Float64Array(n);
  const tsb = new Float64Array(n);
  const ramp = new Float64Array(n);
  const keepLong = Math.exp(-1 / CTL_DAYS);
  const keepShort = Math.exp(-1 / ATL_DAYS);
  let lastCtl = 0;
  let lastAtl = 0;
  for (let d = 0; d < n; d++) {
    tsb[d] = lastCtl - lastAtl;
    const s = stress[d]!;
    ctl[d] = s * (1 - keepLong) + lastCtl * keepLong;
    atl[d] = s * (1 - keepShort) + lastAtl * keepShort;
    ramp[d] = ctl[d]! - (d >= RAMP_DAYS ? ctl[d - RAMP_DAYS]! : 0);
    lastCtl = ctl[d]!;
    lastAtl = atl[d]!;
  }
  return { ctl, atl, tsb, ramp };
}
