// The activity page's time series: one uPlot chart per recorded channel, stacked, sharing the x axis
// (seconds since the activity's start). Their cursors are synced (hovering one shows every channel's
// value at that instant in each chart's legend), dragging across one zooms all, double-clicking one
// shows the whole activity again. Laps are drawn as alternating bands behind the series, numbered on
// the top chart; a window (a mean-max best) can be highlighted and zoomed to.

import { PALETTE, drawChart, formatDuration } from './charts.js';
import { formatDistance, pageUnits, speedDisplay } from './units.js';

/** The channels charted over time, in this order, with the unit shown and the conversion from the API's SI value. */
export const TIME_SERIES_CHANNELS = [
  { key: 'power', label: 'Power', unit: 'W', digits: 0 },
  { key: 'heart_rate', label: 'Heart rate', unit: 'bpm', digits: 0 },
  { key: 'speed', label: 'Speed', unit: 'km/h', factor: 3.6, digits: 1 },
  { key: 'cadence', label: 'Cadence', unit: 'rpm', digits: 0 },
  { key: 'altitude', label: 'Altitude', unit: 'm', digits: 0 },
  { key: 'temperature', label: 'Temperature', unit: '°C', digits: 1 },
  { key: 'core_temperature', label: 'Core temperature', unit: '°C', digits: 2 },
  { key: 'smo2', label: 'SmO₂', unit: '%', digits: 1 },
  { key: 'respiration_rate', label: 'Respiration rate', unit: 'br/min', digits: 1 },
];

/** Tick steps of the elapsed-time axis (s): seconds up to whole hours. */
const TIME_INCRS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
const Y_AXIS_SIZE = 56;
const LAP_FILL = 'rgba(36, 83, 214, 0.08)';
const HIGHLIGHT_FILL = 'rgba(255, 127, 14, 0.22)';

/** A channel's values in display units (nulls kept: they are pauses, drawn as gaps). */
function displayValues(channel, values) {
  if (channel.convert) return values.map((v) => (v === null ? null : channel.convert(v)));
  if (!channel.factor) return values;
  return values.map((v) => (v === null ? null : v * channel.factor));
}

/**
 * The channels as this user reads them for this sport: speed as pace (running, walking, hiking,
 * swimming) or km/h or mph (api/web/static/units.js); the others as they are.
 */
export function channelsFor(channels, sport, units = pageUnits()) {
  return channels.map((c) => (c.key === 'speed' ? { ...c, ...speedDisplay(sport, units) } : c));
}

/**
 * Draw the stacked charts into `container`.
 * `x`: seconds since the start per row; `frame`: the `/data` JSON frame; `laps`: [{start, end}] in
 * seconds since the start; `channels`: the TIME_SERIES_CHANNELS present in the frame.
 * Returns a controller: `charts`, `zoomTo(min, max)`, `reset()`, `highlight(window | null)`,
 * `onCursor(fn)` (called with the row index under the cursor, or null).
 */
export function drawTimeSeries(container, { x, frame, laps, channels }) {
  const charts = [];
  const cursorListeners = [];
  const syncKey = `activity-${Math.random().toString(36).slice(2)}`;
  // What the hooks read as it changes: the highlighted window; whether a zoom is being passed on to the other charts.
  const state = { highlighted: null, syncing: false };
  const timeValue = timeLegend(frame);
  const followZoom = zoomFollower(charts, channels.length, state);

  channels.forEach((channel, i) => {
    const el = chartElement(container, channel);
    const hooks = {
      drawClear: [lapBands(laps, state, i === 0)],
      setScale: [followZoom],
      // The cursors are synced, so the top chart's follows whichever chart is hovered.
      setCursor: i === 0 ? [(u) => cursorListeners.forEach((fn) => fn(u.cursor.idx ?? null))] : [],
    };
    const options = chartOptions(channel, i, i === channels.length - 1, { syncKey, timeValue, hooks });
    const chart = drawChart(el, options, [x, displayValues(channel, frame[channel.key])]);
    el.dataset.laps = String(laps.length);
    charts.push(chart);
  });
  return timeSeriesController(charts, x, state, cursorListeners);
}

/** The time series' legend of the x value: elapsed time, the local clock time and the distance so far. */
function timeLegend(frame) {
  const clock = (idx) => (idx == null ? '' : (frame.timestamp_local?.[idx] ?? '').slice(11, 19));
  const distance = frame.distance;
  return (_u, v, _si, idx) => {
    if (v == null) return '–';
    const parts = [formatDuration(v), clock(idx)];
    if (distance && idx != null && distance[idx] != null) parts.push(formatDistance(distance[idx], pageUnits()));
    return parts.filter(Boolean).join(' · ');
  };
}

/** Alternating lap bands (and the highlighted window) behind the series; lap numbers on the top chart (`numbered`). */
function lapBands(laps, state, numbered) {
  return (u) => {
    const { ctx, bbox } = u;
    const dpr = devicePixelRatio || 1;
    ctx.save();
    ctx.beginPath();
    ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
    ctx.clip();
    if (laps.length > 1) {
      ctx.font = `${11 * dpr}px system-ui, sans-serif`;
      ctx.textBaseline = 'top';
      laps.forEach((lap, i) => {
        const x0 = u.valToPos(lap.start, 'x', true);
        const x1 = u.valToPos(lap.end, 'x', true);
        if (i % 2 === 0) {
          ctx.fillStyle = LAP_FILL;
          ctx.fillRect(x0, bbox.top, x1 - x0, bbox.height);
        }
        if (numbered && x1 - x0 > 16 * dpr) {
          ctx.fillStyle = '#5b6475';
          ctx.fillText(String(i + 1), Math.max(x0, bbox.left) + 3 * dpr, bbox.top + 3 * dpr);
        }
      });
    }
    const highlighted = state.highlighted;
    if (highlighted) {
      const x0 = u.valToPos(highlighted.min, 'x', true);
      const x1 = u.valToPos(highlighted.max, 'x', true);
      ctx.fillStyle = HIGHLIGHT_FILL;
      ctx.fillRect(x0, bbox.top, Math.max(x1 - x0, 2 * dpr), bbox.height);
    }
    ctx.restore();
  };
}

/** A zoom (drag, double-click, zoomTo) of one chart applies to all of them (once all `count` are drawn). */
function zoomFollower(charts, count, state) {
  return (u, key) => {
    if (key !== 'x' || state.syncing || charts.length < count) return;
    const { min, max } = u.scales.x;
    state.syncing = true;
    for (const other of charts)
      if (other !== u && (other.scales.x.min !== min || other.scales.x.max !== max)) other.setScale('x', { min, max });
    state.syncing = false;
  };
}

/** The element a channel's chart is drawn in, appended to `container`. */
function chartElement(container, channel) {
  const el = document.createElement('div');
  el.className = 'ts-chart';
  el.id = `${channel.key}-chart`;
  el.dataset.channel = channel.key;
  container.append(el);
  return el;
}

/** The uPlot options of the `i`th chart of the stack; the `last` one shows the time axis. */
function chartOptions(channel, i, last, { syncKey, timeValue, hooks }) {
  return {
    height: last ? 170 : 140,
    cursor: { y: false, sync: { key: syncKey, scales: ['x', null] }, drag: { x: true, y: false, setScale: true } },
    // A pace runs downward: faster is higher, as speed is.
    scales: { x: { time: false }, ...(channel.reversed ? { y: { dir: -1 } } : {}) },
    legend: { live: true },
    series: [
      { label: 'Time', value: timeValue },
      {
        label: `${channel.label} (${channel.unit})`,
        stroke: channel.color ?? PALETTE[i % PALETTE.length],
        width: 1,
        points: { show: false },
        value: (_u, v) => (channel.text ? channel.text(v) : v == null ? '–' : v.toFixed(channel.digits)),
      },
    ],
    axes: [
      last
        ? { incrs: TIME_INCRS, values: (_u, splits) => splits.map(formatDuration), space: 60 }
        : { incrs: TIME_INCRS, values: (_u, splits) => splits.map(() => ''), size: 8, ticks: { show: false } },
      { size: Y_AXIS_SIZE, space: 30, ...(channel.tick ? { values: (_u, splits) => splits.map(channel.tick) } : {}) },
    ],
    hooks,
  };
}

/** What drawTimeSeries returns: the charts, zooming, the highlighted window, the cursor's listeners. */
function timeSeriesController(charts, x, state, cursorListeners) {
  const redraw = () => charts.forEach((c) => c.redraw(false));
  return {
    charts,
    zoomTo(min, max) {
      state.syncing = true;
      for (const c of charts) c.setScale('x', { min, max });
      state.syncing = false;
    },
    reset() {
      if (!x.length) return;
      this.zoomTo(x[0], x[x.length - 1]);
    },
    highlight(window) {
      const highlighted = state.highlighted;
      const same = highlighted === window || (highlighted && window && highlighted.min === window.min && highlighted.max === window.max);
      if (same) return;
      state.highlighted = window;
      redraw();
    },
    onCursor(fn) {
      cursorListeners.push(fn);
    },
  };
}
