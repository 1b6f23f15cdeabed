// Longitudinal curves (GET /api/v1/activities/longitudinal-mean-max frames) as uPlot charts on a
// log-duration axis, with a readout naming, for each curve, the point nearest the cursor and the
// activity that owns it. Used by the curves page and the home page.

import { drawChart, formatDuration, PALETTE } from './charts.js';
import { metricDisplay } from './units.js';

/** Duration axis ticks (s): thinned to fit the chart's width. */
export const DURATION_TICKS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

/**
 * A curve: `x` ascending; `activity`/`start` the owner of each point (absent for a model).
 * @typedef {{ label: string, x: number[], y: number[], activity?: (string|null)[], start?: (string|null)[], color?: string, dash?: number[] }} Curve
 */

/** The rows of a frame (column arrays) split by its `after` column, in the order the states appear; one part when there is none. */
export function splitByAfter(frame) {
  const after = frame.after;
  if (!after) return [{ after: null, frame }];
  const parts = [];
  const columns = Object.keys(frame);
  let current;
  for (let i = 0; i < after.length; i++) {
    if (!current || current.after !== after[i]) {
      current = { after: after[i], frame: Object.fromEntries(columns.map((c) => [c, []])) };
      parts.push(current);
    }
    for (const c of columns) current.frame[c].push(frame[c][i]);
  }
  return parts;
}

/**
 * The duration-indexed curve of a value-indexed frame (one row per level, ascending, with the longest
 * `duration` sustained at or above it): for each distinct duration, the highest level sustained that
 * long (the corners of the staircase), with that row's activity and start. Durations come out ascending.
 */
export function durationCurve(frame, metric) {
  const levels = frame[metric] ?? [];
  const out = { x: [], y: [], activity: [], start: [] };
  for (let k = levels.length - 1; k >= 0; k--) {
    const d = frame.duration[k];
    if (!(d >= 1) || levels[k] === null) continue;
    if (out.x.length && d <= out.x[out.x.length - 1]) continue; // a lower level lasting no longer: not a corner
    out.x.push(d);
    out.y.push(levels[k]);
    out.activity.push(frame.activity_id?.[k] ?? null);
    out.start.push(frame.start?.[k] ?? null);
  }
  return out;
}

/** The value-indexed curve as it is: x the level, y the longest duration at or above it (rows with a duration). */
export function levelCurve(frame, metric) {
  const levels = frame[metric] ?? [];
  const out = { x: [], y: [], activity: [], start: [] };
  for (let k = 0; k < levels.length; k++) {
    const d = frame.duration[k];
    if (!(d >= 1) || levels[k] === null) continue;
    out.x.push(levels[k]);
    out.y.push(d);
    out.activity.push(frame.activity_id?.[k] ?? null);
    out.start.push(frame.start?.[k] ?? null);
  }
  return out;
}

/** A `by=duration` frame's rows with a value, as they are (durations ascending). */
export function sampledCurve(frame, metric) {
  const out = { x: [], y: [], activity: [], start: [] };
  for (let i = 0; i < frame.duration.length; i++) {
    if (frame[metric][i] === null) continue;
    out.x.push(frame.duration[i]);
    out.y.push(frame[metric][i]);
    out.activity.push(frame.activity_id?.[i] ?? null);
    out.start.push(frame.start?.[i] ?? null);
  }
  return out;
}

/**
 * A `by=duration` frame in the value-indexed view: x the value, ascending, y the longest sampled
 * duration held at it (of equal values, the longest duration), with that row's activity and start.
 */
export function sampledLevelCurve(frame, metric) {
  const d = sampledCurve(frame, metric);
  const order = d.x.map((_, i) => i).sort((a, b) => d.y[a] - d.y[b] || d.x[b] - d.x[a]);
  const out = { x: [], y: [], activity: [], start: [] };
  for (const i of order) {
    if (out.x.length && d.y[i] === out.x[out.x.length - 1]) continue; // the same value held for less time
    out.x.push(d.y[i]);
    out.y.push(d.x[i]);
    out.activity.push(d.activity[i]);
    out.start.push(d.start[i]);
  }
  return out;
}

function durationSplits(u, axisIdx, min, max) {
  const inRange = DURATION_TICKS.filter((d) => d >= min && d <= max);
  const room = Math.max(2, Math.floor((axisIdx === 0 ? u.bbox.width : u.bbox.height) / devicePixelRatio / 55));
  const every = Math.ceil(inRange.length / room);
  return inRange.filter((_, i) => i % every === 0);
}

/** The index of the x in `xs` (ascending) nearest to `x`, comparing logarithms when `log`. */
function nearest(xs, x, log) {
  if (!xs.length || !Number.isFinite(x)) return -1;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return 0;
  const f = log ? Math.log : (v) => v;
  return Math.abs(f(xs[lo]) - f(x)) < Math.abs(f(x) - f(xs[lo - 1])) ? lo : lo - 1;
}

/** One line of the readout: the curve's colour, label, duration, value and owning activity (linked). */
function readoutLine(curve, i, display, view) {
  const li = document.createElement('li');
  const swatch = document.createElement('span');
  swatch.className = 'swatch';
  swatch.style.background = curve.color;
  const duration = view === 'value' ? curve.y[i] : curve.x[i];
  const value = view === 'value' ? curve.x[i] : curve.y[i];
  li.append(swatch, `${curve.label}: `);
  const strong = document.createElement('strong');
  strong.textContent = `${display.text(value)} ${display.unit} for ${formatDuration(duration)}`;
  strong.className = 'readout-value';
  li.append(strong);
  const id = curve.activity?.[i];
  if (id) {
    const a = document.createElement('a');
    a.href = `/activities/${id}`;
    a.className = 'readout-activity';
    const start = curve.start?.[i];
    a.textContent = start ? `activity of ${start.slice(0, 10)}` : 'activity';
    li.append(' · ', a);
  }
  li.dataset.duration = String(duration);
  li.dataset.value = String(value);
  return li;
}

/**
 * Draw `curves` in `container`: view `duration` (x the duration on a log axis, y the metric) or `value`
 * (x the level, y the duration on a log axis). Every curve is one series (x values joined with nulls,
 * lines spanning them). `readout`, when given, lists the point of each curve nearest the cursor and
 * keeps the last one when the cursor leaves, so its activity links can be followed.
 */
/**
 * Curves drawn over the main one are dashed, so a compared range or a fatigue state equal to the main
 * curve (the same best efforts) leaves it visible between its dashes instead of hiding it.
 */
const ROLE_DASH = { compare: [10, 6], after: [4, 4] };

export function drawCurveChart(container, given, { metric, view = 'duration', readout = null, height = 320, sport = null }) {
  // Values as the user reads them (api/web/static/units.js): a running speed as a pace in the duration
  // view; in the value view levels stay speeds (km/h or mph), whose axis must ascend.
  const byDuration = view !== 'value';
  const display = metricDisplay(metric, byDuration ? sport : null);
  const curves = given.map((c) => (byDuration ? { ...c, y: c.y.map(display.convert) } : { ...c, x: c.x.map(display.convert) }));
  curves.forEach((c, i) => (c.color ??= PALETTE[i % PALETTE.length]));
  const data = curves.length ? uPlot.join(curves.map((c) => [c.x, c.y])) : [[]];
  // Log axes label only powers of ten unless told otherwise (`filter`): every tick we chose is labelled.
  const durationAxis = {
    splits: durationSplits,
    filter: (_u, splits) => splits,
    values: (_u, splits) => splits.map((v) => (v === null ? '' : formatDuration(v))),
  };
  const metricValues = (_u, splits) =>
    splits.map((v) => (v === null ? '' : display.tick ? display.tick(v) : metric === 'speed' ? v.toFixed(1) : String(v)));
  const options = {
    height,
    legend: { live: false },
    scales: byDuration
      ? { x: { time: false, distr: 3, log: 10 }, y: { auto: true, dir: display.reversed ? -1 : 1 } }
      : { x: { time: false }, y: { distr: 3, log: 10 } },
    axes: byDuration
      ? [durationAxis, { label: display.unit, size: 55, values: metricValues }]
      : [
          { label: display.unit, values: metricValues },
          { ...durationAxis, size: 60 },
        ],
    series: [
      { label: byDuration ? 'Duration' : display.unit },
      ...curves.map((c) => ({
        label: c.label,
        stroke: c.color,
        width: 2,
        dash: c.dash ?? ROLE_DASH[c.role],
        spanGaps: true,
        points: { show: false },
      })),
    ],
    cursor: { drag: { x: false, y: false } },
    hooks: {
      setCursor: readout
        ? [
            (u) => {
              if (u.cursor.left === null || u.cursor.left < 0) return;
              const x = u.posToVal(u.cursor.left, 'x');
              const lines = [];
              for (const c of curves) {
                const i = nearest(c.x, x, byDuration);
                if (i >= 0) lines.push(readoutLine(c, i, display, view));
              }
              readout.replaceChildren(...lines);
            },
          ]
        : [],
    },
  };
  const chart = drawChart(container, options, data);
  container.curves = curves;
  return chart;
}
