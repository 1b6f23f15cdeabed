// Settings → Thresholds' add form (api/web/thresholds.ts): the critical speed field's label follows the
// sport typed, a pace (min/km, min/mi, min/100 m, min/100 yd) or a speed (km/h, mph) in the user's units,
// as the server reads it (api/web/thresholds-form.ts speedFieldLabel).

import { isPace, speedUnit } from './units.js';

const sport = document.getElementById('sport');
const label = document.querySelector('label[for="critical_speed"]');
const units = document.querySelector('.threshold-fields')?.dataset.units === 'imperial' ? 'imperial' : 'metric';

/** The label for a sport code (cycling when none is typed yet). */
export function speedFieldLabel(code, unitSystem) {
  const s = code || 'cycling';
  return isPace(s) ? `Threshold pace (min${speedUnit(s, unitSystem)})` : `Critical speed (${speedUnit(s, unitSystem)})`;
}

if (sport && label) {
  const follow = () => (label.textContent = speedFieldLabel(sport.value.trim(), units));
  sport.addEventListener('input', follow);
}
