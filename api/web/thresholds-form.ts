import type { z } from 'zod';
import type { DeclaredThreshold } from '../../db/training-load.ts';
import { THRESHOLD_RANGES, ThresholdsBody } from '../services/training-load/model.ts';
import { formatSpeed, isPace, minutesSeconds, speedStyle, speedUnit, type Units } from './static/units.js';
import type { FieldErrors, FormValues } from './forms.ts';

/**
 * Settings → Thresholds' add-row form (./thresholds.ts): each value typed in the unit the person reads
 * it in (W, kJ, bpm; critical speed as the sport reads it: a pace m:ss per km, mile, 100 m or 100 yd,
 * or a speed in km/h or mph), read into the API's units (W, J, m/s, bpm) and checked with the API's own
 * schema (ThresholdsBody) against the whole history, so a value the API would refuse is refused here
 * with the same bounds, said next to its field in the form's units.
 */

export type ThresholdKey = keyof typeof THRESHOLD_RANGES;

export interface ThresholdColumn {
  key: ThresholdKey;
  label: string;
  /** The column's heading in the table. */
  short: string;
}

export const THRESHOLD_COLUMNS: ThresholdColumn[] = [
  { key: 'critical_power', label: 'Critical power (W)', short: 'CP' },
  { key: 'w_prime', label: 'W′ (kJ)', short: 'W′' },
  { key: 'critical_speed', label: 'Critical speed or threshold pace', short: 'CS / threshold pace' },
  { key: 'threshold_heart_rate', label: 'Threshold heart rate (bpm)', short: 'Threshold HR' },
  { key: 'max_heart_rate', label: 'Maximum heart rate (bpm)', short: 'Max HR' },
  { key: 'resting_heart_rate', label: 'Resting heart rate (bpm)', short: 'Resting HR' },
];

/** A stored value as the table shows it (`250 W`, `20.0 kJ`, `4:05 /km`, `172 bpm`). */
export function thresholdText(key: ThresholdKey, value: number, sport: string, units: Units): string {
  if (key === 'critical_power') return `${Math.round(value)} W`;
  if (key === 'w_prime') return `${(value / 1000).toFixed(1)} kJ`;
  if (key === 'critical_speed') return formatSpeed(value, sport, units);
  return `${Math.round(value)} bpm`;
}

/** The critical speed field's label for the sport typed: a pace or a speed, in the user's unit (static/thresholds.js follows the sport field). */
export function speedFieldLabel(sport: string, units: Units): string {
  return isPace(sport) ? `Threshold pace (min${speedUnit(sport, units)})` : `Critical speed (${speedUnit(sport, units)})`;
}

/** What the critical speed field takes for a sport, as its hint says it. */
export function speedInputHint(units: Units): string {
  const pace = (sport: string) => `min${speedUnit(sport, units)}`;
  return `Running, walking, hiking: a pace in ${pace('running')} (m:ss); swimming: ${pace('swimming')}; other sports: a speed in ${speedUnit('cycling', units)}.`;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const number = (text: string): number | undefined => {
  const t = text.replace(',', '.');
  return NUMBER.test(t) ? Number(t) : undefined;
};

/** `m:ss` (or `h:mm:ss`) as seconds; undefined when it is not one. */
function clock(text: string): number | undefined {
  const m = /^(?:(\d+):)?(\d+):([0-5]\d(?:[.,]\d+)?)$/.exec(text);
  if (!m) return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]!.replace(',', '.'));
}

/** The metres a pace is per, for this sport and these units. */
function paceMetres(sport: string, units: Units): number {
  const imperial = units === 'imperial';
  if (speedStyle(sport) === 'swim') return imperial ? 91.44 : 100;
  return imperial ? 1609.344 : 1000;
}

/** A critical speed typed as the sport reads it, in m/s; or why it is not one. */
function speedOf(text: string, sport: string, units: Units): number | string {
  if (isPace(sport)) {
    const unit = `min${speedUnit(sport, units)}`;
    const seconds = clock(text) ?? (number(text) === undefined ? undefined : number(text)! * 60);
    if (seconds === undefined) return `“${text}” is not a pace in ${unit} (m:ss).`;
    if (!(seconds > 0)) return `A pace of ${text} ${unit} is no pace.`;
    return paceMetres(sport, units) / seconds;
  }
  const value = number(text);
  if (value === undefined) return `“${text}” is not a speed in ${speedUnit(sport, units)}.`;
  return units === 'imperial' ? (value * 1609.344) / 3600 : value / 3.6;
}

/** A value typed in a field, in the API's unit; or why it is not one. */
function typedValue(key: ThresholdKey, text: string, sport: string, units: Units): number | string {
  if (key === 'critical_speed') return speedOf(text, sport, units);
  const value = number(text);
  if (value === undefined) return `“${text}” is not a number.`;
  return key === 'w_prime' ? value * 1000 : value;
}

/** The bounds of a field, said in the unit it is typed in. */
function boundsMessage(key: ThresholdKey, sport: string, units: Units): string {
  const { min, max } = THRESHOLD_RANGES[key];
  const label = THRESHOLD_COLUMNS.find((c) => c.key === key)!.label.replace(/ \(.*\)$/, '');
  if (key === 'w_prime') return `${label} must be between ${min / 1000} and ${max / 1000} kJ.`;
  if (key === 'critical_speed') {
    if (isPace(sport)) {
      const metres = paceMetres(sport, units);
      return `A threshold pace must be between ${minutesSeconds(metres / max)} and ${minutesSeconds(metres / min)} min${speedUnit(sport, units)}.`;
    }
    return `A critical speed must be between ${formatSpeed(min, sport, units)} and ${formatSpeed(max, sport, units)}.`;
  }
  return `${label} must be between ${min} and ${max} ${THRESHOLD_RANGES[key].unit}.`;
}

export type NewEntry = { sport: string; valid_from: string } & Partial<Record<ThresholdKey, number>>;

/**
 * The history with the posted entry added, as the API would store it; or the errors by field (`form`:
 * what concerns the history as a whole). `declared` is the stored history.
 */
export function readThresholdForm(
  values: FormValues,
  declared: DeclaredThreshold[],
  units: Units,
): { entries: z.output<typeof ThresholdsBody>['thresholds'] } | { errors: FieldErrors } {
  const errors: FieldErrors = {};
  const sport = (values.sport ?? '').trim();
  const validFrom = (values.valid_from ?? '').trim();
  if (!sport) errors.sport = 'Sport is required.';
  if (!validFrom) errors.valid_from = 'Choose the day the values hold from.';
  const entry: NewEntry = { sport, valid_from: validFrom };
  for (const { key } of THRESHOLD_COLUMNS) {
    const text = (values[key] ?? '').trim();
    if (!text) continue;
    const value = typedValue(key, text, sport, units);
    if (typeof value === 'string') errors[key] = value;
    else entry[key] = value;
  }
  if (Object.values(errors).some(Boolean)) return { errors };
  const parsed = ThresholdsBody.safeParse({ thresholds: [...declared, entry] });
  if (parsed.success) return { entries: parsed.data.thresholds };
  const added = declared.length;
  for (const issue of parsed.error.issues) {
    const [, index, field] = issue.path;
    const key = THRESHOLD_COLUMNS.find((c) => c.key === field)?.key;
    if (index !== added) errors.form ??= `Your stored history is refused: ${issue.message}.`;
    else if (key && (issue.code === 'too_small' || issue.code === 'too_big')) errors[key] ??= boundsMessage(key, sport, units);
    else if (field === 'valid_from' && issue.message.startsWith('Overlapping'))
      errors.valid_from ??= `There already is an entry for ${sport} from ${validFrom}: delete it first, or choose another day.`;
    else if (typeof field === 'string') errors[field] ??= `${issue.message}.`;
    else errors.form ??= `${issue.message}.`;
  }
  return { errors };
}
