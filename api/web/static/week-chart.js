// A week as a bar chart: per weekday, the template week's training durations
// (GET /api/v1/profile/template-week) and, optionally, this week's. Used by the data and home pages.

import { drawChart, formatDuration, PALETTE } from './charts.js';
import { isoDurationSeconds } from './labels.js';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const SHORT = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/**
 * `bars`: [{label, hours: number|null per weekday, color?}], drawn side by side per weekday.
 * Hover values read as durations (`1:30:00`).
 */
export function drawWeekChart(container, bars, { height = 240 } = {}) {
  const n = bars.length;
  const width = 0.8 / n;
  const options = {
    height,
    scales: { x: { time: false, range: [-0.5, 6.5] }, y: { range: (_u, _min, max) => [0, Math.max(0.25, max * 1.1)] } },
    axes: [
      { splits: () => [0, 1, 2, 3, 4, 5, 6], values: (_u, splits) => splits.map((i) => SHORT[i] ?? '') },
      { label: 'hours', size: 45, values: (_u, splits) => splits.map((v) => (v === null ? '' : String(v))) },
    ],
    series: [
      { label: 'Day', value: (_u, i) => (i === null ? '—' : SHORT[i]) },
      ...bars.map((b, k) => {
        const color = b.color ?? PALETTE[k % PALETTE.length];
        // Each series' bars sit in their own slot of the day: shifted from the day's centre.
        const offset = (k - (n - 1) / 2) * width;
        return {
          label: b.label,
          stroke: color,
          fill: `${color}99`,
          width: 1,
          points: { show: false },
          value: (_u, v) => (v === null || v === undefined ? '—' : formatDuration(v * 3600)),
          paths: uPlot.paths.bars({
            size: [1, 48],
            disp: {
              x0: { unit: 1, values: () => WEEKDAYS.map((_, i) => i + offset - width / 2) },
              size: { unit: 1, values: () => [width] },
            },
          }),
        };
      }),
    ],
    cursor: { drag: { x: false, y: false } },
  };
  const data = [WEEKDAYS.map((_, i) => i), ...bars.map((b) => b.hours)];
  return drawChart(container, options, data);
}

/** Hours per weekday of a template week's `key` (`avg_training_duration` or `typical_training_duration`). */
export function templateHours(week, key) {
  return WEEKDAYS.map((d) => isoDurationSeconds(week[d]?.[key]) / 3600);
}
