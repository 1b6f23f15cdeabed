// The fitness chart (the performance management chart) as SVG: a day per column, the day's training
// stress as a bar (right axis), fitness (CTL), fatigue (ATL) and form (TSB) as lines (left axis), from
// GET /api/v1/activities/longitudinal-training-load's column-oriented JSON. Drawn at the container's
// width in CSS pixels (so its text stays legible on a phone) and again when the window resizes; pointing
// at a day shows its values in the readout. Tests read what was drawn from the container: `fitness`
// (the columns drawn), `dataset.days`, and the elements `.stress-bars`, `.ctl-line`, `.atl-line`, `.tsb-line`.

import { niceTicks } from './lactate-chart.js';

const SVG = 'http://www.w3.org/2000/svg';
const PAD = { left: 40, right: 40, top: 22, bottom: 26 };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The lines, in drawing order: their column, class and name in the readout. */
export const FITNESS_LINES = [
  { key: 'tsb', label: 'Form' },
  { key: 'atl', label: 'Fatigue' },
  { key: 'ctl', label: 'Fitness' },
];

function el(name, attrs = {}, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * The labelled ticks of the day axis, about one per 70 px: on a range of more than 120 days month starts
 * (every 1, 2, 3, 6 months, or the years), labelled `Feb` (`Jan 2024` for a January and the first
 * tick; `2024` when only years are); else every 1, 2, 7, 14 or 28 days back from the last, `Jan 9`.
 */
function dayTicks(days, width) {
  const most = Math.max(2, Math.floor(width / 70));
  const month = (i) => MONTHS[Number(days[i].slice(5, 7)) - 1];
  if (days.length > 120) {
    const starts = days.flatMap((d, i) => (d.endsWith('-01') ? [i] : []));
    const monthNo = (i) => Number(days[i].slice(0, 4)) * 12 + Number(days[i].slice(5, 7)) - 1;
    const every = [1, 2, 3, 6, 12, 24, 60, 120, 240, 600].find((k) => starts.length / k <= most) ?? 1200;
    const kept = starts.filter((i) => monthNo(i) % every === 0);
    return kept.map((i, k) => ({
      i,
      label: every >= 12 ? days[i].slice(0, 4) : k === 0 || days[i].slice(5, 7) === '01' ? `${month(i)} ${days[i].slice(0, 4)}` : month(i),
    }));
  }
  const step = [1, 2, 7, 14, 28].find((k) => days.length / k <= most) ?? 28;
  const ticks = [];
  for (let i = days.length - 1; i >= 0; i -= step) ticks.unshift({ i, label: `${month(i)} ${Number(days[i].slice(8, 10))}` });
  return ticks;
}

/** The value's text in the readout: one decimal, a minus sign. */
const one = (v) => (v == null || !Number.isFinite(v) ? '—' : v.toFixed(1).replace('-', '−'));

/** `2024-01-09: stress 85, fitness 42.1, fatigue 60.3, form −12.0` for day `i`. */
export function fitnessReadout(frame, i) {
  const day = frame.date[i].slice(0, 10);
  return `${day}: stress ${Math.round(frame.stress[i])}, fitness ${one(frame.ctl[i])}, fatigue ${one(frame.atl[i])}, form ${one(frame.tsb[i])}`;
}

function scales(frame, width, height) {
  const n = frame.date.length;
  const iw = width - PAD.left - PAD.right;
  const ih = height - PAD.top - PAD.bottom;
  const loads = [...frame.ctl, ...frame.atl, ...frame.tsb].filter(Number.isFinite);
  const loadTicks = niceTicks(Math.min(0, ...loads), Math.max(10, ...loads), 5);
  const [lo, hi] = [loadTicks[0], loadTicks[loadTicks.length - 1]];
  const stressTicks = niceTicks(0, Math.max(50, ...frame.stress.filter(Number.isFinite)), 4);
  const sHi = stressTicks[stressTicks.length - 1];
  return {
    n,
    iw,
    ih,
    loadTicks,
    stressTicks,
    x: (i) => PAD.left + ((i + 0.5) / n) * iw,
    y: (v) => PAD.top + ih - ((v - lo) / (hi - lo)) * ih,
    ys: (v) => PAD.top + ih - (v / sHi) * ih,
  };
}

function axes(svg, frame, s, width) {
  const days = frame.date.map((d) => d.slice(0, 10));
  const g = el('g', { class: 'axes' });
  for (const t of s.loadTicks) {
    g.append(el('line', { x1: PAD.left, x2: PAD.left + s.iw, y1: s.y(t), y2: s.y(t), class: t === 0 ? 'zero' : 'grid' }));
    g.append(el('text', { x: PAD.left - 6, y: s.y(t) + 4, class: 'tick', 'text-anchor': 'end' }, String(t)));
  }
  for (const t of s.stressTicks)
    g.append(el('text', { x: PAD.left + s.iw + 6, y: s.ys(t) + 4, class: 'tick stress-tick', 'text-anchor': 'start' }, String(t)));
  for (const { i, label } of dayTicks(days, width)) {
    g.append(el('line', { x1: s.x(i), x2: s.x(i), y1: PAD.top + s.ih, y2: PAD.top + s.ih + 4, class: 'axis' }));
    g.append(el('text', { x: s.x(i), y: PAD.top + s.ih + 17, class: 'tick', 'text-anchor': 'middle' }, label));
  }
  g.append(el('line', { x1: PAD.left, x2: PAD.left + s.iw, y1: PAD.top + s.ih, y2: PAD.top + s.ih, class: 'axis' }));
  g.append(el('text', { x: 4, y: 11, class: 'axis-label', 'text-anchor': 'start' }, 'Load'));
  g.append(el('text', { x: width - 4, y: 11, class: 'axis-label stress-tick', 'text-anchor': 'end' }, 'Stress'));
  svg.append(g);
}

/** Every day's stress as one path of bars (a day without stress draws nothing). */
function stressBars(frame, s) {
  const w = Math.max(1, (s.iw / s.n) * 0.7);
  const base = s.ys(0);
  const d = frame.stress
    .map((v, i) =>
      v > 0 ? `M${(s.x(i) - w / 2).toFixed(1)} ${base.toFixed(1)}V${s.ys(v).toFixed(1)}h${w.toFixed(1)}V${base.toFixed(1)}Z` : '',
    )
    .join('');
  return el('path', { d, class: 'stress-bars', 'data-days': frame.stress.filter((v) => v > 0).length });
}

function line(frame, s, key) {
  const points = frame[key].map((v, i) => (Number.isFinite(v) ? `${s.x(i).toFixed(1)},${s.y(v).toFixed(1)}` : null)).filter(Boolean);
  return el('polyline', { points: points.join(' '), class: `${key}-line`, 'data-points': points.length });
}

/** The cursor: a vertical line at the day pointed at, its values in `readout`; the last day's when the pointer leaves. */
function follow(svg, frame, s, readout, height) {
  const cursor = el('line', { x1: 0, x2: 0, y1: PAD.top, y2: height - PAD.bottom, class: 'cursor', visibility: 'hidden' });
  const area = el('rect', { x: PAD.left, y: PAD.top, width: s.iw, height: s.ih, class: 'hover-area' });
  svg.append(cursor, area);
  const show = (i) => {
    if (readout) readout.textContent = fitnessReadout(frame, i);
  };
  area.addEventListener('pointermove', (e) => {
    const box = svg.getBoundingClientRect();
    const i = Math.min(s.n - 1, Math.max(0, Math.floor(((e.clientX - box.left - PAD.left) / s.iw) * s.n)));
    cursor.setAttribute('x1', s.x(i));
    cursor.setAttribute('x2', s.x(i));
    cursor.setAttribute('visibility', 'visible');
    show(i);
  });
  area.addEventListener('pointerleave', () => {
    cursor.setAttribute('visibility', 'hidden');
    show(s.n - 1);
  });
  show(s.n - 1);
}

function draw(container, frame, readout) {
  const style = getComputedStyle(container);
  const width = Math.max(260, container.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight));
  const height = width < 500 ? 220 : 280;
  const s = scales(frame, width, height);
  const svg = el('svg', {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    class: 'fitness-svg',
    'aria-label': `Fitness, fatigue, form and daily training stress from ${frame.date[0].slice(0, 10)} to ${frame.date[s.n - 1].slice(0, 10)}`,
  });
  axes(svg, frame, s, width);
  svg.append(stressBars(frame, s), ...FITNESS_LINES.map((l) => line(frame, s, l.key)));
  follow(svg, frame, s, readout, height);
  container.replaceChildren(svg);
}

/**
 * Draw `frame` (the chart's JSON columns: date, stress, ctl, atl, tsb) into `container`, the values of
 * the day pointed at (else the last day) in `readout`. Drawing again replaces the chart.
 */
export function drawFitnessChart(container, frame, { readout } = {}) {
  if (container.onFitnessResize) window.removeEventListener('resize', container.onFitnessResize);
  container.fitness = frame;
  container.dataset.days = String(frame.date.length);
  if (!frame.date.length) {
    container.replaceChildren();
    return;
  }
  draw(container, frame, readout);
  let pending = 0;
  let drawnWidth = container.clientWidth;
  container.onFitnessResize = () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      if (container.clientWidth === drawnWidth) return;
      drawnWidth = container.clientWidth;
      draw(container, frame, readout);
    });
  };
  window.addEventListener('resize', container.onFitnessResize);
  container.dataset.drawn = 'true';
}
