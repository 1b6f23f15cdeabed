// Units as a person reads them, by their preference (Settings: metric or imperial) and the sport, as
// Strava does: pace for running, walking and hiking (per km or mile), pace per 100 m or 100 yd for
// swimming, speed (km/h or mph) for everything else. The API itself stays in SI (m/s, metres); only the
// pages convert. One module for the server-rendered pages (api/web/*.ts, typed by units.d.ts) and the
// browser's charts.

import { rootSport } from './labels.js';

export const UNIT_SYSTEMS = ['metric', 'imperial'];

const MILE = 1609.344;
const YARD = 0.9144;
const PACE_SPORTS = ['running', 'walking', 'hiking'];
/** Below this a pace is no longer a pace (a standstill): shown as none. */
const SLOWEST_PACED = 0.2;

/** How a sport's speed reads: 'pace' (per km or mile), 'swim' (per 100 m or 100 yd), or 'speed'. */
export function speedStyle(sport) {
  const r = sport ? rootSport(sport) : null;
  if (r === 'swimming') return 'swim';
  return PACE_SPORTS.includes(r) ? 'pace' : 'speed';
}

/** The unit of a sport's speed as shown: `km/h`, `mph`, `/km`, `/mi`, `/100 m`, `/100 yd`. */
export function speedUnit(sport, units) {
  const imperial = units === 'imperial';
  const style = speedStyle(sport);
  if (style === 'pace') return imperial ? '/mi' : '/km';
  if (style === 'swim') return imperial ? '/100 yd' : '/100 m';
  return imperial ? 'mph' : 'km/h';
}

/** Whether larger shown numbers mean slower (a pace): a chart's axis then runs downward. */
export function isPace(sport) {
  return speedStyle(sport) !== 'speed';
}

/** A speed in m/s as the number shown: km/h or mph, or a pace in seconds per km, mile, 100 m or 100 yd (null: none). */
export function speedValue(mps, sport, units) {
  if (mps === null || mps === undefined || Number.isNaN(mps)) return null;
  const imperial = units === 'imperial';
  const style = speedStyle(sport);
  if (style === 'speed') return imperial ? (mps * 3600) / MILE : mps * 3.6;
  if (!(mps >= SLOWEST_PACED)) return null;
  const metres = style === 'swim' ? (imperial ? 100 * YARD : 100) : imperial ? MILE : 1000;
  return metres / mps;
}

/** `4:05` for 245 seconds (a pace's minutes and seconds). */
export function minutesSeconds(seconds) {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

/** A speed in m/s as a person reads it: `32.4 km/h`, `20.1 mph`, `4:05 /km`, `6:34 /mi`, `1:45 /100 m`; `—` for none. */
export function formatSpeed(mps, sport, units) {
  const v = speedValue(mps, sport, units);
  if (v === null) return '—';
  const unit = speedUnit(sport, units);
  return isPace(sport) ? `${minutesSeconds(v)} ${unit}` : `${v.toFixed(1)} ${unit}`;
}

/** A shown speed value (speedValue's) as an axis tick: `32`, or `4:05` for a pace. */
export function speedTick(value, sport) {
  if (value === null || value === undefined) return '';
  return isPace(sport) ? minutesSeconds(value) : String(Math.round(value * 10) / 10);
}

/** A distance in metres as km or miles. */
export function distanceValue(metres, units) {
  return units === 'imperial' ? metres / MILE : metres / 1000;
}

/** A distance in metres: `57.60 km` or `35.79 mi`; `—` for none. */
export function formatDistance(metres, units, digits = 2) {
  if (metres === null || metres === undefined || !Number.isFinite(metres)) return '—';
  return `${distanceValue(metres, units).toFixed(digits)} ${units === 'imperial' ? 'mi' : 'km'}`;
}

/** The unit preference of the page (the `data-units` of its body; metric when absent). */
export function pageUnits() {
  return globalThis.document?.body?.dataset.units === 'imperial' ? 'imperial' : 'metric';
}

/** The other curve metrics: as they are, in their unit. */
const PLAIN = { power: { label: 'Power', unit: 'W', digits: 0 }, heart_rate: { label: 'Heart rate', unit: 'bpm', digits: 0 } };

/**
 * How a curve metric reads for this sport and preference: speed as pace or km/h or mph (sport null:
 * always a speed), power and heart rate as they are. The same shape as speedDisplay's.
 */
export function metricDisplay(metric, sport, units = pageUnits()) {
  if (metric === 'speed') return speedDisplay(sport, units);
  const m = PLAIN[metric];
  return {
    label: m.label,
    unit: m.unit,
    convert: (v) => (v === null || v === undefined ? null : v),
    text: (v) => (v === null || v === undefined ? '–' : v.toFixed(m.digits)),
    tick: null,
    reversed: false,
  };
}

/**
 * How a speed reads on a chart for this sport and preference: its label and unit, the conversion of an
 * API value (m/s), a value's text and an axis tick's, and whether the axis runs downward (a pace:
 * larger is slower).
 */
export function speedDisplay(sport, units) {
  const pace = isPace(sport);
  return {
    label: pace ? 'Pace' : 'Speed',
    unit: pace ? `min${speedUnit(sport, units)}` : speedUnit(sport, units),
    convert: (mps) => speedValue(mps, sport, units),
    text: (v) => (v === null || v === undefined ? '–' : pace ? minutesSeconds(v) : v.toFixed(1)),
    tick: (v) => speedTick(v, sport),
    reversed: pace,
  };
}
