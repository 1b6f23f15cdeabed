import { rootSport } from '../../lib/sports.ts';
import { MEASUREMENT_RANGES } from '../services/measurements.ts';
import { isPace, speedStyle, speedUnit, type Units } from './static/units.js';

/**
 * A lactate step table pasted from a spreadsheet, as the test form takes it: one row per step,
 * `step, intensity, duration, lactate, heart rate` separated by tabs, semicolons or commas (a row
 * with a tab or a semicolon reads a comma inside a cell as a decimal comma), a header row first
 * skipped, heart rate optional. Intensity is in W for cycling sports, else in the speed unit the
 * user reads the sport in (km/h or mph, or a pace `m:ss` per km, mile, 100 m or 100 yd; Settings →
 * Units); duration in minutes (`3`, `2.5`) or `m:ss`. Steps are stored in SI units (W, m/s, s).
 */

export interface Step {
  /** What the step column says (kept as text: `0`, `1`, `rest`, …). */
  label: string;
  metric: 'power' | 'speed';
  /** W or m/s. */
  intensity: number;
  durationSeconds: number;
  lactate: number;
  heartRate: number | null;
}

export interface StepTableError {
  /** The row's line in the pasted text, from 1. */
  row: number;
  /** The column, from 1, and its name. */
  column: number;
  columnName: string;
  message: string;
}

const COLUMNS = ['step', 'intensity', 'duration', 'lactate', 'heart rate'] as const;

/** The metric of a sport's steps: power for cycling, speed for the rest. */
export function stepMetric(sport: string): 'power' | 'speed' {
  return rootSport(sport) === 'cycling' ? 'power' : 'speed';
}

/** What the intensity column takes for this sport and these units (`W`, `km/h`, `min/km`, …). */
export function intensityUnit(sport: string, units: Units): string {
  if (stepMetric(sport) === 'power') return 'W';
  return isPace(sport) ? `min${speedUnit(sport, units)}` : speedUnit(sport, units);
}

function cells(line: string): string[] {
  const separator = line.includes('\t') ? '\t' : line.includes(';') ? ';' : ',';
  const parts = line.split(separator).map((c) => c.trim());
  return separator === ',' ? parts : parts.map((c) => c.replace(',', '.'));
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const number = (text: string): number | undefined => (NUMBER.test(text) ? Number(text) : undefined);

/** `m:ss` (or `h:mm:ss`) as seconds; undefined when it is not one. */
function clock(text: string): number | undefined {
  const m = /^(?:(\d+):)?(\d+):([0-5]\d(?:\.\d+)?)$/.exec(text);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]);
}

/** The metres a pace is per, for this sport and these units. */
function paceMetres(sport: string, units: Units): number {
  const imperial = units === 'imperial';
  if (speedStyle(sport) === 'swim') return imperial ? 91.44 : 100;
  return imperial ? 1609.344 : 1000;
}

/** An intensity cell in SI units, or the reason it is not one. */
function intensityOf(text: string, sport: string, units: Units): number | string {
  const unit = intensityUnit(sport, units);
  if (stepMetric(sport) === 'power') return number(text) ?? `“${text}” is not a power in W`;
  if (isPace(sport)) {
    const seconds = clock(text) ?? (number(text) === undefined ? undefined : number(text)! * 60);
    if (seconds === undefined) return `“${text}” is not a pace in ${unit} (m:ss)`;
    // A pace of zero is a rest (speed 0), as an intensity of 0 is for the other sports.
    return seconds === 0 ? 0 : paceMetres(sport, units) / seconds;
  }
  const value = number(text);
  if (value === undefined) return `“${text}” is not a speed in ${unit}`;
  return units === 'imperial' ? (value * 1609.344) / 3600 : value / 3.6;
}

function bounded(value: number, name: keyof typeof MEASUREMENT_RANGES): string | undefined {
  const { min, max, unit } = MEASUREMENT_RANGES[name];
  return value < min || value > max ? `is outside ${min}–${max} ${unit}` : undefined;
}

type RowResult = { step: Step } | { error: Omit<StepTableError, 'row'> };
const fail = (column: number, message: string): RowResult => ({
  error: { column, columnName: COLUMNS[column - 1]!, message },
});

function parseRow(c: string[], sport: string, units: Units): RowResult {
  if (c.length < 4) return fail(c.length + 1, `is missing: a row needs ${COLUMNS.slice(0, 4).join(', ')} (and optionally heart rate)`);
  if (c.length > 5 && c.slice(5).some((x) => x !== '')) return fail(6, 'is one too many: a row has at most 5 columns');
  const metric = stepMetric(sport);
  const intensity = intensityOf(c[1]!, sport, units);
  if (typeof intensity === 'string') return fail(2, intensity);
  const outside = bounded(intensity, metric);
  if (outside) return fail(2, `“${c[1]}” ${outside}`);
  if (metric === 'power' && !Number.isInteger(intensity)) return fail(2, `“${c[1]}” is not a whole number of watts`);
  const durationSeconds = clock(c[2]!) ?? (number(c[2]!) === undefined ? undefined : number(c[2]!)! * 60);
  if (durationSeconds === undefined || durationSeconds < 0 || durationSeconds > 6 * 3600)
    return fail(3, `“${c[2]}” is not a duration in minutes or m:ss (up to 6 hours)`);
  const lactate = number(c[3]!);
  if (lactate === undefined) return fail(4, `“${c[3]}” is not a lactate in mmol/L`);
  const badLactate = bounded(lactate, 'lactate');
  if (badLactate) return fail(4, `“${c[3]}” ${badLactate}`);
  let heartRate: number | null = null;
  if (c[4]) {
    const hr = number(c[4]);
    if (hr === undefined) return fail(5, `“${c[4]}” is not a heart rate in bpm`);
    const badHr = bounded(hr, 'heart_rate');
    if (badHr) return fail(5, `“${c[4]}” ${badHr}`);
    if (!Number.isInteger(hr)) return fail(5, `“${c[4]}” is not a whole number of beats per minute`);
    heartRate = hr;
  }
  return { step: { label: c[0]!, metric, intensity, durationSeconds, lactate, heartRate } };
}

/** The most rows a table holds (a step test has tens; the analysis takes at most 100 steps). */
export const MAX_STEPS = 100;

/** The steps of a pasted table, or the first bad cell (its row and column). */
export function parseStepTable(text: string, sport: string, units: Units): { steps: Step[] } | { error: StepTableError } {
  const steps: Step[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  let seenRow = false;
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    const c = cells(line);
    // The first row is a header when its intensity or lactate cell holds no digit.
    const isHeader = !seenRow && !/\d/.test(`${c[1] ?? ''}${c[3] ?? ''}`);
    seenRow = true;
    if (isHeader) continue;
    if (steps.length === MAX_STEPS)
      return {
        error: { row: i + 1, column: 1, columnName: 'step', message: `is one row too many: a table holds at most ${MAX_STEPS} steps` },
      };
    const result = parseRow(c, sport, units);
    if ('error' in result) return { error: { row: i + 1, ...result.error } };
    steps.push(result.step);
  }
  if (!steps.length) return { error: { row: 1, column: 1, columnName: 'step', message: 'no step: paste at least one row of the table' } };
  return { steps };
}

/** An error as the form shows it: `Row 3, column 4 (lactate): “x” is not a lactate in mmol/L.` */
export function stepTableMessage(e: StepTableError): string {
  return `Row ${e.row}, column ${e.column} (${e.columnName}): ${e.message}.`;
}
