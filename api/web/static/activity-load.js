// The activity page's training load, from GET /api/v1/activities/{id} (docs/architecture.md, "The
// activity page"): the training stress (score, method and intensity factor, or why there is none), the
// time in each zone per metric as horizontal bars (bounds in the user's units: W, bpm, a pace or a
// speed by the sport), and the lowest W′ balance. While the load is being computed (after an upload or a
// threshold change) the activity is read again until it is there. The W′ balance itself is a chart of
// the time series (`withWPrimeBalance`), under the power chart, sharing its time axis and cursor.

import { apiJson } from './api-client.js';
import { formatDuration } from './charts.js';
import { formatSpeed, isPace, pageUnits, speedDisplay } from './units.js';

/** The W′ balance as a channel of the time series (J from the API, shown in kJ). */
export const W_PRIME_CHANNEL = { key: 'w_prime_balance', label: 'W′ balance', unit: 'kJ', factor: 0.001, digits: 1, color: '#0f766e' };

/** The time series' channels with the W′ balance right after power, when the frame holds a value of it. */
export function withWPrimeBalance(channels, frame) {
  const values = frame?.w_prime_balance;
  if (!values?.some((v) => v !== null && Number.isFinite(v))) return channels;
  const at = channels.findIndex((c) => c.key === 'power') + 1;
  return [...channels.slice(0, at), W_PRIME_CHANNEL, ...channels.slice(at)];
}

const METHODS = {
  power: 'from power (normalized power and critical power)',
  pace: 'from pace (critical speed)',
  heart_rate: 'from heart rate (TRIMP)',
};
const POLL_MS = 2000;
const POLL_TRIES = 90;
const $ = (id) => document.getElementById(id);

function term(dl, label, value, id) {
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.id = id;
  dd.textContent = value;
  dl.append(dt, dd);
}

/** The training stress, its intensity factor and the lowest W′ balance, as the `#training-stress` list. */
function showStress(activity) {
  const dl = $('training-stress');
  dl.replaceChildren();
  const ts = activity.training_stress;
  if (ts.score === null) term(dl, 'Training stress', `None: ${ts.reason ?? 'no method applies'}.`, 'stress-score');
  else term(dl, 'Training stress', `${Math.round(ts.score)}, ${METHODS[ts.method] ?? ts.method}`, 'stress-score');
  if (ts.intensity_factor !== null) term(dl, 'Intensity factor', ts.intensity_factor.toFixed(2), 'intensity-factor');
  if (activity.w_prime_balance_min !== null && activity.w_prime_balance_min !== undefined)
    term(dl, 'Lowest W′ balance', `${(activity.w_prime_balance_min / 1000).toFixed(1)} kJ`, 'w-prime-min');
  dl.dataset.method = ts.method ?? '';
  dl.hidden = false;
}

/** How a zone metric's bounds read: power in W, heart rate in bpm, speed as this sport reads it. */
function zoneMetric(metric, sport, units) {
  if (metric === 'power') return { title: 'Power zones', text: (v) => `${Math.round(v)} W`, pace: false };
  if (metric === 'heart_rate') return { title: 'Heart rate zones', text: (v) => `${Math.round(v)} bpm`, pace: false };
  const pace = isPace(sport);
  return { title: `${speedDisplay(sport, units).label} zones`, text: (v) => formatSpeed(v, sport, units), pace };
}

/** `< 138 W`, `138–188 W`, `≥ 375 W`; a pace in words, slower and faster (a higher speed is a lower pace). */
export function zoneBoundsText(zone, m) {
  const unitless = (v) => m.text(v).replace(/ \S+$/, '');
  const first = !(zone.low > 0);
  const last = zone.high === null;
  if (m.pace) {
    if (first && last) return 'any pace';
    if (first) return `slower than ${m.text(zone.high)}`;
    if (last) return `${m.text(zone.low)} and faster`;
    return `${unitless(zone.low)}–${m.text(zone.high)}`;
  }
  if (first && last) return 'all';
  if (first) return `< ${m.text(zone.high)}`;
  if (last) return `≥ ${m.text(zone.low)}`;
  return `${unitless(zone.low)}–${m.text(zone.high)}`;
}

function zoneRow(zone, m, total) {
  const li = document.createElement('li');
  li.dataset.zone = String(zone.zone);
  li.dataset.seconds = String(zone.seconds);
  const name = document.createElement('span');
  name.className = 'zone-name';
  name.textContent = `Z${zone.zone} ${zone.name}`;
  const bounds = document.createElement('span');
  bounds.className = 'zone-bounds';
  bounds.textContent = zoneBoundsText(zone, m);
  const bar = document.createElement('span');
  bar.className = 'zone-bar';
  const fill = document.createElement('span');
  fill.className = `zone-fill zone-${Math.min(zone.zone, 7)}`;
  const share = total ? zone.seconds / total : 0;
  // CSSOM, not a style attribute: the page's CSP allows no inline style.
  fill.style.width = `${(share * 100).toFixed(1)}%`;
  bar.append(fill);
  const time = document.createElement('span');
  time.className = 'zone-time';
  time.textContent = `${formatDuration(zone.seconds)} · ${Math.round(share * 100)} %`;
  li.append(name, bounds, bar, time);
  return li;
}

/** Per metric with zones, a figure of horizontal bars: each zone's name, bounds, share of the time and duration. */
function showZones(zones, sport) {
  const box = $('time-in-zones');
  const units = pageUnits();
  const metrics = ['power', 'heart_rate', 'speed'].filter((k) => zones?.[k]?.length);
  box.replaceChildren(
    ...metrics.map((metric) => {
      const m = zoneMetric(metric, sport, units);
      const figure = document.createElement('figure');
      figure.className = 'zone-chart';
      figure.dataset.metric = metric;
      const caption = document.createElement('figcaption');
      caption.textContent = m.title;
      const total = zones[metric].reduce((sum, z) => sum + z.seconds, 0);
      const list = document.createElement('ol');
      list.className = 'zone-rows';
      list.append(...zones[metric].map((z) => zoneRow(z, m, total)));
      figure.append(caption, list);
      return figure;
    }),
  );
  if (!metrics.length) {
    const p = document.createElement('p');
    p.id = 'no-zones';
    p.className = 'muted';
    p.textContent = 'No zones: no threshold of the metrics this activity records holds on its day.';
    box.append(p);
  }
}

/**
 * Show the training load of `activity` (the API's details), reading `base` (its API path) again while
 * its load is being computed. `sport` is the activity's sport code.
 */
export async function showTrainingLoad(activity, { base, sport }) {
  const section = $('training-load');
  if (!section) return;
  const status = $('load-status');
  let current = activity;
  for (let tries = 0; current.training_stress === null; tries++) {
    section.dataset.state = 'computing';
    status.hidden = false;
    if (tries >= POLL_TRIES) {
      status.textContent = 'The training stress is still being computed: reload the page in a while.';
      return;
    }
    status.textContent = 'Computing the training stress…';
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    current = await apiJson(base);
  }
  status.hidden = true;
  showStress(current);
  showZones(current.time_in_zones, sport);
  section.dataset.state = 'ready';
}
