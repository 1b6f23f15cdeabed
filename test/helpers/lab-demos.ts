import type { LactateStep } from '../../engine/tests/lactate.ts';

/**
 * The published demo data and outputs of the two R packages the lab-test methods follow, for the
 * engine's tests (test/engine-lactate.test.ts, test/engine-critical-power.test.ts) and the API's
 * (test/tests-analysis.test.ts): lactater's step test and cyclingtools' critical-power efforts.
 */

/**
 * lactater's demo data (R package lactater, Maturana et al., 2021): repository fmmattioni/lactater, file
 * data-raw/demo_data.R (also printed in README.md), commit d6c7456150ff9d50085210d532f9f1d5ea01268c.
 * Columns: intensity (W), lactate (mmol/L), heart rate (bpm); the first row is the resting sample.
 */
export const DEMO: LactateStep[] = (
  [
    [0, 0.93, 96],
    [50, 0.98, 114],
    [75, 1.23, 134],
    [100, 1.88, 154],
    [125, 2.8, 170],
    [150, 4.21, 182],
    [175, 6.66, 193],
    [191, 8.64, 198],
  ] as [number, number, number][]
).map(([intensity, lactate, heartRate]) => ({ intensity, lactate, heartRate }));

/**
 * lactater's output on DEMO, as README.md prints it (same repository and commit), for
 * lactate_threshold(fit = "3rd degree polynomial", include_baseline = TRUE, sport = "cycling"):
 * method, intensity, lactate, heart rate, exactly as printed (tibble: three significant digits, a trailing
 * "." when digits were cut; lactater rounds intensity to 0.1 W and model lactate to 0.1 mmol/L first).
 */
export const README: [string, string, string, number][] = [
  ['Log-log', '83.4', '1.4', 140],
  ['OBLA 2.0', '105.', '2', 153],
  ['OBLA 2.5', '118.', '2.5', 160],
  ['OBLA 3.0', '129', '3', 167],
  ['OBLA 3.5', '137', '3.5', 171],
  ['OBLA 4.0', '145', '4', 176],
  ['Bsln + 0.5', '82.5', '1.43', 139],
  ['Bsln + 1.0', '104.', '1.93', 152],
  ['Bsln + 1.5', '117.', '2.43', 159],
  ['Dmax', '132.', '3.1', 168],
  ['ModDmax', '140.', '3.6', 173],
  ['Exp-Dmax', '135.', '3.3', 170],
  ['Log-Poly-ModDmax', '143', '3.8', 175],
  ['Log-Exp-ModDmax', '146.', '4', 177],
  ['LTP1', '88.9', '1.5', 143],
  ['LTP2', '148.', '4.1', 178],
  ['LTratio', '71.2', '1.2', 132],
];

/**
 * How far a value may be from a printed one: "105." stands for 104.5..105.5; "83.4" and "129" (a value
 * lactater rounded to 0.1 that printed whole) for ±0.05; "1.43" for ±0.005.
 */
export function tolerance(printed: string): number {
  if (printed.endsWith('.')) return 0.5 + 1e-9;
  const decimals = printed.includes('.') ? printed.split('.')[1]!.length : 1;
  return 0.5 * 10 ** -Math.max(decimals, 1) + 1e-9;
}

/**
 * LTP1: lactater's `segmented` stops when the residual sum of squares changes by less than 1e-5 (relative) and
 * restarts from random bootstrap samples, so its breakpoint is not the exact least-squares optimum this module
 * finds: 88.846 W here against lactater's 88.9 (88.85..88.95); the residual sum of squares differs by 2.5e-5
 * (relative) between the two. Allowed: 0.1 W.
 */
export const LTP1_TOLERANCE = 0.1;

/*
 * Reference data and outputs from the R package cyclingtools, repository fmmattioni/cyclingtools,
 * commit adcc563525a0fafec1292f0c0e44021df32dfcb4 (the last to touch these files; HEAD is
 * 8e0abaf099a27619c7476d247a1181ec4a6718bb):
 * - data-raw/demo_critical_power.R: PO (W) and TTE (s) of five efforts;
 * - data-raw/demo_critical_speed.R: Distance (m) and TTE (s) of three efforts (speed = Distance / TTE,
 *   as cyclingtools computes it);
 * - README.md: the printed tibbles of `critical_power(demo_critical_power, …)` (all five efforts, and
 *   the first rows of `all_combinations = TRUE`) and of `critical_speed(demo_critical_speed, …)`.
 *
 * cyclingtools rounds CP, W′, Pmax and their standard errors to 1 decimal (CS, D′ and theirs to 2),
 * R2 to 5 and RMSE to 2, and the tibble printer then shows about 3 significant digits: a trailing "."
 * marks hidden decimals ("260." is 259.5–260.5), a number with a decimal part may have been cut
 * ("0.998"), and a number without either is the whole rounded value ("4794" is 4794.0).
 */
export const demoPower = { po: [446, 385, 324, 290, 280], tte: [100, 172, 434, 857, 1361] };
export const demoSpeed = { distance: [956, 1500, 3399], tte: [180, 300, 720] };

/** The largest difference from the printed number that its printing allows (see above). */
export function printedTolerance(printed: string, roundDigits: number): number {
  const rounding = 0.5 * 10 ** -roundDigits;
  if (printed.endsWith('.')) return 0.5 + rounding;
  const decimals = printed.includes('.') ? printed.split('.')[1]!.length : 0;
  if (decimals === 0 || decimals >= roundDigits) return rounding + 1e-9;
  return 0.5 * 10 ** -decimals + rounding;
}

/** Printed row: [CP, CP SEE, W′, W′ SEE, Pmax, Pmax SEE, R2] as strings, null where not printed. */
export type Row = [string, string, string, string, string | null, string | null, string | null, string | null];

/** What a critical-power fit gives, as the engine names it. */
export interface CriticalValues {
  model: string;
  cp: number;
  cpSe: number | null;
  wPrime: number;
  wPrimeSe: number | null;
  pmax: number | null;
  pmaxSe: number | null;
  r2: number;
  see: number | null;
}

/** The README's rows for demo_critical_power, all five efforts: 3-parameter, hyperbolic, work-time, 1/time. */
export const DEMO_POWER_PRINTED: Row[] = [
  ['260.', '3.1', '27410.', '4794', '1004.', '835.', '0.998', null],
  ['262.', '1.6', '24174.', '1889.', null, null, '0.997', null],
  ['266.', '3', '20961.', '2248.', null, null, '1.00', null],
  ['274.', '6.2', '17784.', '1160', null, null, '0.987', null],
];

export function agrees(e: CriticalValues, row: Row, digits: number): string[] {
  const got = [e.cp, e.cpSe, e.wPrime, e.wPrimeSe, e.pmax, e.pmaxSe, e.r2, e.see];
  const names = ['CP', 'CP SE', "W'", "W' SE", 'Pmax', 'Pmax SE', 'R2', 'RMSE'];
  const roundings = [digits, digits, digits, digits, digits, digits, 5, 2];
  const failures: string[] = [];
  row.forEach((printed, i) => {
    if (printed === null) return;
    const value = got[i];
    const tolerance = printedTolerance(printed, roundings[i]!);
    if (typeof value !== 'number' || !(Math.abs(value - Number(printed)) <= tolerance)) {
      failures.push(`${e.model} ${names[i]}: ${value} vs printed ${printed} (± ${tolerance})`);
    }
  });
  return failures;
}
