// The signed-in home page (/): latest activities, the fitness chart (its range picked above it), the
// 90-day curve and this week against the template week, from the public API; with no activity yet, the
// first steps instead.

import { apiFrame, apiJson, latestDay } from './api-client.js';
import { formatDuration } from './charts.js';
import { drawCurveChart, durationCurve } from './curve-chart.js';
import { isoDay, isoDurationSeconds, localMinute, rootSport, sportLabel } from './labels.js';
import { drawWeekChart, templateHours, WEEKDAYS } from './week-chart.js';
import { drawFitnessChart } from './fitness-chart.js';
import { formatDistance, pageUnits } from './units.js';

const LATEST = 5;
const $ = (id) => document.getElementById(id);

function activityItem(a) {
  const li = document.createElement('li');
  li.dataset.activityId = a.id;
  const link = document.createElement('a');
  link.href = `/activities/${a.id}`;
  link.textContent = `${sportLabel(a.sport)}, ${localMinute(a.start_local)}`;
  const facts = [formatDuration(isoDurationSeconds(a.duration))];
  const km = a.summary?.distance?.sum;
  if (typeof km === 'number') facts.push(formatDistance(km, pageUnits(), 1));
  const power = a.summary?.power?.mean;
  if (typeof power === 'number') facts.push(`${Math.round(power)} W average`);
  li.append(link, ` · ${facts.join(' · ')}`);
  return li;
}

/**
 * The best efforts of the last 90 days; when the sport's newest activity is older, of the 90 days up
 * to it (an imported history), said in the heading and the status. No chart box without a curve.
 */
async function drawCurve() {
  const sports = await apiJson('/api/v1/profile/sports/');
  const roots = [...new Set(sports.map(rootSport))].sort();
  const sport = roots.includes('cycling') ? 'cycling' : roots[0];
  const metric = sport === 'cycling' ? 'power' : 'speed';
  const latest = (await latestDay(sport)) ?? isoDay();
  const recent = latest >= isoDay(new Date(), -89);
  const end = recent ? isoDay() : latest;
  const start = isoDay(new Date(`${end}T00:00:00Z`), -89);
  const frame = await apiFrame(
    `/api/v1/activities/longitudinal-mean-max?sport=${encodeURIComponent(sport)}&metric=${metric}&start=${start}&end=${end}`,
  );
  const curve = durationCurve(frame, metric);
  const label = recent ? 'Last 90 days' : `90 days to ${end}`;
  $('home-curve-heading').textContent = recent ? 'Best efforts of the last 90 days' : `Best efforts of the 90 days up to ${end}`;
  $('home-curve-link').href =
    `/curves?${new URLSearchParams(recent ? { sport, metric, range: '90d' } : { sport, metric, range: 'custom', start, end })}`;
  const sportName = sportLabel(sport).toLowerCase();
  $('home-curve-status').textContent = !curve.x.length
    ? `Your ${sportName} activities from ${start} to ${end} record no ${metric}.`
    : recent
      ? `${sportLabel(sport)}, ${metric}, ${start} to ${end}.`
      : `No ${sportName} in the last 90 days: your newest is from ${latest}, so these are the 90 days up to it.`;
  $('home-curve-chart').hidden = !curve.x.length;
  if (curve.x.length)
    drawCurveChart($('home-curve-chart'), [{ label, ...curve }], { metric, readout: $('home-curve-readout'), height: 260, sport });
}

/** Hours trained per weekday this week (Monday to today, by the local date of each activity's start); null for the days to come. */
export function thisWeekHours(activities, today) {
  const weekday = (day) => (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
  const todayIndex = weekday(today);
  const hours = WEEKDAYS.map((_, i) => (i <= todayIndex ? 0 : null));
  for (const a of activities) {
    const day = a.start_local.slice(0, 10);
    const i = weekday(day);
    if (hours[i] !== null) hours[i] += (Date.parse(a.end) - Date.parse(a.start)) / 3_600_000;
  }
  return hours;
}

async function drawWeek() {
  const today = isoDay();
  const monday = isoDay(new Date(`${today}T00:00:00Z`), -((new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7));
  const [template, week] = await Promise.all([
    apiJson('/api/v1/profile/template-week'),
    apiJson(`/api/v1/activities/?start=${monday}&end=${today}&limit=1000`),
  ]);
  const series = [
    { label: 'Template (average)', hours: templateHours(template, 'avg_training_duration') },
    { label: 'This week', hours: thisWeekHours(week, today) },
  ];
  // Nothing this week nor in the 12 weeks before (an old history): a sentence, not an empty chart.
  const idle = series.every((s) => s.hours.every((h) => !h));
  $('home-week-status').hidden = !idle;
  $('home-week-status').textContent = idle ? 'No training this week nor in the 12 weeks before.' : '';
  $('home-week-chart').hidden = idle;
  if (!idle) drawWeekChart($('home-week-chart'), series);
}

/** The days back from today (the first day included) of each preset range of the fitness chart; `all` from the first day with stress. */
const FITNESS_DAYS = { '90d': 90, '6m': 182, '1y': 365 };

/** The query of the fitness chart's range: `range` a preset, or `custom` with the dates' inputs. */
function fitnessRange(range) {
  const end = range === 'custom' ? $('fitness-end').value : isoDay();
  if (range === 'all') return { end };
  if (range === 'custom') return { start: $('fitness-start').value, end };
  return { start: isoDay(new Date(), 1 - FITNESS_DAYS[range]), end };
}

const trainingLoad = (query) => apiFrame(`/api/v1/activities/longitudinal-training-load?${new URLSearchParams(query)}`);

/**
 * The fitness chart of the range; with no training stress at all (no thresholds yet), the sentence
 * pointing to Settings → Thresholds instead of the chart and its controls.
 */
async function drawFitness(range) {
  const query = fitnessRange(range);
  const status = $('fitness-status');
  status.classList.remove('error');
  if (range === 'custom' && !(query.start && query.end && query.start <= query.end)) {
    status.textContent = 'Choose a first day on or before the last.';
    status.classList.add('error');
    return;
  }
  const frame = await trainingLoad(query);
  const some = (f) => f.stress.some((v) => v > 0) || f.ctl.some((v) => v > 0.05);
  const none = !some(frame) && !some(await trainingLoad({ end: isoDay() }));
  for (const id of ['fitness-controls', 'fitness-chart', 'fitness-readout', 'fitness-legend']) $(id).hidden = none;
  $('fitness-empty').hidden = !none;
  $('fitness').dataset.state = none ? 'empty' : 'drawn';
  if (none) {
    status.textContent = '';
    return;
  }
  const first = frame.date[0]?.slice(0, 10);
  status.textContent = some(frame)
    ? `From ${first} to ${query.end}.`
    : `No training stress from ${first ?? query.start} to ${query.end}: choose a longer range, or All.`;
  drawFitnessChart($('fitness-chart'), frame, { readout: $('fitness-readout') });
}

/** The range buttons and the dates' form: each choice draws the chart again. */
function fitnessControls() {
  const buttons = [...document.querySelectorAll('#fitness-ranges button')];
  const failed = (err) => {
    $('fitness-status').classList.add('error');
    $('fitness-status').textContent = `Could not draw the fitness chart: ${err.message}`;
  };
  for (const button of buttons)
    button.addEventListener('click', () => {
      const range = button.dataset.range;
      for (const b of buttons) b.setAttribute('aria-pressed', String(b === button));
      $('fitness-dates').hidden = range !== 'custom';
      if (range !== 'custom') return drawFitness(range).catch(failed);
      $('fitness-end').value ||= isoDay();
      $('fitness-start').value ||= isoDay(new Date(), -89);
      $('fitness-start').focus();
    });
  $('fitness-dates').addEventListener('submit', (e) => {
    e.preventDefault();
    drawFitness('custom').catch(failed);
  });
  return drawFitness('90d').catch(failed);
}

async function start() {
  const latest = await apiJson(`/api/v1/activities/?limit=${LATEST}`);
  if (!latest.length) {
    $('home-start').hidden = false;
    return;
  }
  $('home-training').hidden = false;
  $('latest-activities').replaceChildren(...latest.map(activityItem));
  await Promise.all([fitnessControls(), drawCurve(), drawWeek()]);
}

start().catch((err) => {
  $('home-status').classList.add('error');
  $('home-status').textContent = `Could not load your training: ${err.message}`;
});
