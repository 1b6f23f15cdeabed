// The Tests page's form (/tests): the start is a local date-time on this browser's clock, so its UTC
// offset (at that date, daylight saving included) rides along in `utc_offset_minutes`; the unit the
// step table's intensity takes follows the sport chosen (W for cycling, else the user's speed or pace unit).

import { isPace, speedUnit } from './units.js';
import { rootSport } from './labels.js';

const form = document.getElementById('create-test');
const start = document.getElementById('start');
const offset = document.getElementById('utc_offset_minutes');
const sport = document.getElementById('sport');
const unit = document.getElementById('intensity-unit');

/** Minutes east of UTC of this browser's clock at the local date-time `value` (`YYYY-MM-DDTHH:MM`). */
export function offsetMinutes(value) {
  const at = value ? new Date(value) : new Date();
  return Number.isNaN(at.getTime()) ? -new Date().getTimezoneOffset() : -at.getTimezoneOffset();
}

function intensityUnit(code, units) {
  if (!code) return 'W';
  if (rootSport(code) === 'cycling') return 'W';
  return isPace(code) ? `min${speedUnit(code, units)}` : speedUnit(code, units);
}

if (form && start && offset) {
  const setOffset = () => (offset.value = String(offsetMinutes(start.value)));
  start.addEventListener('change', setOffset);
  form.addEventListener('submit', setOffset);
  setOffset();
}
if (sport && unit) {
  const setUnit = () => (unit.textContent = intensityUnit(sport.value.trim(), unit.dataset.units));
  sport.addEventListener('input', setUnit);
  setUnit();
}
