// The activity's curves: its mean-max curve on a log-duration axis (every duration the API offers with
// `durations=all`; the standard durations marked; hovering a point names its best's start, clicking
// it shows that best in the time series) and its accumulated work duration (time at or above each
// level, on a log-duration axis).

import { drawChart, formatDuration, logDurationAxis, logDurationScale } from './charts.js';
import { metricDisplay } from './units.js';

/** The durations marked on the mean-max curve (s). */
const MARKED = new Set([1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 10800, 18000, 21600]);

/**
 * The mean-max curve of `frame` (`duration`, the metric, `start`) into `container`.
 * `startSeconds[i]` is row i's best window start in seconds since the activity's start (null when none).
 * `onHover(i | null)` and `onPick(i)` receive the row under the cursor and the row clicked.
 */
export function drawMeanMax(container, { frame, metric, sport, startSeconds, onHover, onPick }) {
  const m = metricDisplay(metric, sport);
  const durations = frame.duration;
  const values = frame[metric].map((v) => m.convert(v));
  const chart = drawChart(
    container,
    {
      height: 260,
      cursor: { drag: { x: false, y: false }, points: { size: 10 } },
      scales: { x: logDurationScale(), ...(m.reversed ? { y: { dir: -1 } } : {}) },
      legend: { live: true },
      series: [
        {
          label: 'Duration',
          value: (_u, v, _si, idx) => {
            if (v == null || idx == null) return '–';
            const start = startSeconds[idx];
            return start == null ? formatDuration(v) : `${formatDuration(v)} from ${formatDuration(start)}`;
          },
        },
        {
          label: `Best ${m.label.toLowerCase()} (${m.unit})`,
          stroke: '#d62728',
          width: 2,
          points: { show: true, size: 6, fill: '#fff', filter: () => durations.flatMap((d, i) => (MARKED.has(d) ? [i] : [])) },
          value: (_u, v) => m.text(v),
        },
      ],
      axes: [logDurationAxis({ space: 40 }), { size: 56, ...(m.tick ? { values: (_u, splits) => splits.map(m.tick) } : {}) }],
      hooks: { setCursor: [(u) => onHover?.(u.cursor.idx ?? null)] },
    },
    [durations, values],
  );
  chart.over.addEventListener('click', () => {
    const idx = chart.cursor.idx;
    if (idx != null && startSeconds[idx] != null) onPick?.(idx);
  });
  chart.over.addEventListener('mouseleave', () => onHover?.(null));
  return chart;
}

/**
 * The accumulated work duration of `frame` (the level column named after `metric`, `duration`; the API
 * sends levels highest first) into `container`: level ascending on x, time at or above it on a log axis.
 */
export function drawAwd(container, { frame, metric }) {
  // Levels are speeds (km/h or mph), never paces: the time at or above a level reads by speed.
  const m = metricDisplay(metric, null);
  const n = frame.duration.length;
  const levels = new Array(n);
  const seconds = new Array(n);
  for (let i = 0; i < n; i++) {
    levels[i] = m.convert(frame[metric][n - 1 - i]);
    seconds[i] = frame.duration[n - 1 - i];
  }
  return drawChart(
    container,
    {
      height: 240,
      cursor: { drag: { x: true, y: false, setScale: true } },
      scales: { x: { time: false }, y: logDurationScale() },
      legend: { live: true },
      series: [
        { label: `${m.label} (${m.unit})`, value: (_u, v) => (v == null ? '–' : `≥ ${m.text(v)}`) },
        {
          label: 'Time at or above',
          stroke: '#1f77b4',
          fill: 'rgba(31, 119, 180, 0.12)',
          width: 2,
          points: { show: false },
          value: (_u, v) => (v == null ? '–' : formatDuration(v)),
        },
      ],
      axes: [{ space: 50 }, logDurationAxis({ size: 56 })],
    },
    [levels, seconds],
  );
}
