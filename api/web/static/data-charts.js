// Charts of the data page (/data), from the public API: one chart per daily measure with values
// (measured days as points, the API's interpolation between them as a dashed line), the traces on a
// timeline, and the template week.

import { apiJson } from './api-client.js';
import { drawChart, PALETTE } from './charts.js';
import { isoDay, METRIC_UNITS } from './labels.js';
import { drawWeekChart, templateHours } from './week-chart.js';
import { pageUnits, speedUnit, speedValue } from './units.js';

/** The daily measures (docs/api-clients.md, "Dailies"), their labels, units and how values are shown. */
export const MEASURES = [
  { key: 'body_mass', label: 'Body mass', unit: 'kg' },
  { key: 'body_fat_pct', label: 'Body fat', unit: '%' },
  { key: 'resting_hr', label: 'Resting heart rate', unit: 'bpm' },
  { key: 'hrv', label: 'Heart rate variability', unit: 'ms' },
  { key: 'sleep_duration', label: 'Sleep', unit: 'h', scale: 1 / 3600 },
  { key: 'sleep_altitude', label: 'Sleep altitude', unit: 'm' },
  { key: 'menstrual_cycle_day', label: 'Menstrual cycle day', unit: 'day' },
];
export const DAILY_DAYS = 365;

/** Trace values drawn on the timeline, each on its own scale. */
const TRACE_VALUES = [
  { key: 'lactate', label: 'Lactate', unit: 'mmol/L' },
  { key: 'power', label: 'Power', unit: METRIC_UNITS.power },
  { key: 'heart_rate', label: 'Heart rate', unit: 'bpm' },
  // Traces of every sport share the chart: speed as a speed (km/h or mph by the user's units), never a pace.
  { key: 'speed', label: 'Speed', unit: speedUnit(null, pageUnits()), convert: (v) => speedValue(v, null, pageUnits()) },
  { key: 'vo2', label: 'VO₂', unit: 'mL/min/kg' },
  { key: 'rpe', label: 'RPE', unit: '' },
];

const $ = (id) => document.getElementById(id);
const epoch = (day) => Date.parse(`${day}T00:00:00Z`) / 1000;
const pointsOnly = () => null;

/**
 * A daily series as two chart series: `measured` (stored days, drawn as points) and `interpolated`
 * (estimated days and the stored days they join, drawn as a dashed line; null elsewhere).
 */
export function dailySeries(days, scale = 1) {
  const value = (d) => (d.value === null ? null : d.value * scale);
  const measured = days.map((d) => (d.status === 'stored' ? value(d) : null));
  const interpolated = days.map((d, i) => {
    if (d.status === 'estimated') return value(d);
    const joins = d.status === 'stored' && (days[i - 1]?.status === 'estimated' || days[i + 1]?.status === 'estimated');
    return joins ? value(d) : null;
  });
  return { x: days.map((d) => epoch(d.date)), measured, interpolated };
}

function dailyChart(measure, days) {
  const figure = document.createElement('figure');
  figure.className = 'daily-chart';
  figure.dataset.measure = measure.key;
  const caption = document.createElement('figcaption');
  caption.textContent = `${measure.label} (${measure.unit})`;
  const container = document.createElement('div');
  container.className = 'chart';
  container.id = `daily-chart-${measure.key}`;
  figure.append(caption, container);
  $('daily-charts').append(figure);
  const s = dailySeries(days, measure.scale);
  const color = PALETTE[1];
  drawChart(
    container,
    {
      height: 200,
      scales: { x: { time: true } },
      axes: [{}, { label: measure.unit, size: 50 }],
      series: [
        {},
        { label: 'Measured', stroke: color, paths: pointsOnly, points: { show: true, size: 7, fill: color } },
        { label: 'Interpolated', stroke: color, width: 1.5, dash: [5, 5], points: { show: false } },
      ],
    },
    [s.x, s.measured, s.interpolated],
  );
}

async function drawDailies() {
  const start = isoDay(new Date(), 1 - DAILY_DAYS);
  const end = isoDay();
  const answers = await Promise.all(
    MEASURES.map((m) =>
      apiJson(`/api/v1/dailies/${m.key}?start=${start}&end=${end}&interpolate=true`).then((days) => ({ measure: m, days })),
    ),
  );
  const shown = answers.filter(({ days }) => days.some((d) => d.status === 'stored'));
  $('daily-charts').replaceChildren();
  for (const { measure, days } of shown) dailyChart(measure, days);
  $('no-daily-charts').hidden = shown.length > 0;
}

async function drawTraces() {
  const traces = (await apiJson('/api/v1/traces/?limit=1000')).reverse(); // oldest first
  const present = TRACE_VALUES.filter((v) => traces.some((t) => t[v.key] !== null && t[v.key] !== undefined));
  const container = $('traces-chart');
  container.hidden = !present.length;
  $('no-traces-chart').hidden = present.length > 0;
  if (!present.length) return;
  drawChart(
    container,
    {
      height: 240,
      scales: Object.fromEntries(present.map((v) => [v.key, { auto: true }])),
      // Every value its own axis, in its series' colour, alternately left and right: heart rate and
      // RPE are read on their own scales, not on lactate's or power's.
      axes: [
        {},
        ...present.map((v, i) => ({
          scale: v.key,
          label: `${v.label}${v.unit ? ` (${v.unit})` : ''}`,
          side: i % 2 ? 1 : 3,
          size: 50,
          stroke: PALETTE[i % PALETTE.length],
          grid: { show: i === 0 },
        })),
      ],
      series: [
        {},
        ...present.map((v, i) => ({
          label: v.label,
          scale: v.key,
          stroke: PALETTE[i % PALETTE.length],
          paths: pointsOnly,
          points: { show: true, size: 8, fill: PALETTE[i % PALETTE.length] },
        })),
      ],
    },
    [
      traces.map((t) => Date.parse(t.timestamp) / 1000),
      ...present.map((v) =>
        traces.map((t) => (t[v.key] === null || t[v.key] === undefined ? null : v.convert ? v.convert(t[v.key]) : t[v.key])),
      ),
    ],
  );
}

async function drawTemplateWeek() {
  const week = await apiJson('/api/v1/profile/template-week');
  drawWeekChart($('template-week-chart'), [
    { label: 'Average', hours: templateHours(week, 'avg_training_duration') },
    { label: 'Typical (median)', hours: templateHours(week, 'typical_training_duration') },
  ]);
}

for (const [draw, status] of [
  [drawDailies, 'daily-charts-status'],
  [drawTraces, 'traces-chart-status'],
  [drawTemplateWeek, 'template-week-status'],
]) {
  draw().catch((err) => {
    $(status).classList.add('error');
    $(status).textContent = `Could not draw this chart: ${err.message}`;
  });
}
