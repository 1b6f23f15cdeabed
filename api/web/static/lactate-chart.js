// A lactate curve as SVG: lactate (left axis) and heart rate (right axis) against the steps'
// intensity, each method's threshold a marked vertical line at its intensity. Intensities arrive in
// W or m/s and are drawn as the user reads them (`display`: units.js's metricDisplay; a pace axis
// runs so that faster is to the right). Tests read the drawing from its elements: `.lactate-point`,
// `.hr-point`, `.threshold-marker[data-method]`.

import { PALETTE } from './charts.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 800;
const H = 380;
const PAD = { left: 52, right: 52, top: 16, bottom: 44 };

/** A colour per method category. */
export const CATEGORY_COLOURS = {
  'Log-log': PALETTE[4],
  OBLA: PALETTE[1],
  'Bsln+': PALETTE[2],
  Dmax: PALETTE[3],
  LTP: PALETTE[5],
  LTratio: PALETTE[6],
};

function el(name, attrs = {}, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** About five round ticks over [min, max]. */
export function niceTicks(min, max, count = 5) {
  const span = max - min || 1;
  const raw = span / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Math.round(v * 1e9) / 1e9);
  return ticks;
}

function range(values, padFraction = 0.05) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (!finite.length) return [0, 1];
  let lo = Math.min(...finite);
  let hi = Math.max(...finite);
  if (lo === hi) [lo, hi] = [lo - 1, hi + 1];
  const pad = (hi - lo) * padFraction;
  return [lo - pad, hi + pad];
}

/**
 * Draw into `container`: `steps` [{intensity, lactate, heart_rate}], `markers` [{method, category,
 * intensity, lactate}] (intensity in API units), `display` how intensity reads. Returns the svg.
 */
export function drawLactateChart(container, { steps, markers, display }) {
  const xs = steps.map((s) => display.convert(s.intensity));
  const markerXs = markers.map((m) => display.convert(m.intensity));
  const [x0, x1] = range([...xs, ...markerXs].filter((v) => v !== null));
  const [, yHi] = range([...steps.map((s) => s.lactate), ...markers.map((m) => m.lactate ?? 0)]);
  const hrs = steps.map((s) => s.heart_rate).filter((v) => typeof v === 'number');
  const [h0, h1] = range(hrs);
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const px = (v) => (display.reversed ? PAD.left + ((x1 - v) / (x1 - x0)) * iw : PAD.left + ((v - x0) / (x1 - x0)) * iw);
  const py = (v) => PAD.top + ih - (v / yHi) * ih;
  const ph = (v) => PAD.top + ih - ((v - h0) / (h1 - h0)) * ih;

  const svg = el('svg', {
    viewBox: `0 0 ${W} ${H}`,
    role: 'img',
    class: 'lactate-svg',
    'aria-label': 'Lactate and heart rate against intensity',
  });
  const axes = el('g', { class: 'axes' });
  axes.append(el('line', { x1: PAD.left, y1: PAD.top + ih, x2: PAD.left + iw, y2: PAD.top + ih, class: 'axis' }));
  axes.append(el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: PAD.top + ih, class: 'axis' }));
  for (const t of niceTicks(x0, x1)) {
    if (t < x0 || t > x1) continue;
    axes.append(el('line', { x1: px(t), y1: PAD.top, x2: px(t), y2: PAD.top + ih, class: 'grid' }));
    axes.append(
      el('text', { x: px(t), y: PAD.top + ih + 16, class: 'tick', 'text-anchor': 'middle' }, display.tick ? display.tick(t) : String(t)),
    );
  }
  for (const t of niceTicks(0, yHi)) {
    if (t > yHi) continue;
    axes.append(el('line', { x1: PAD.left, y1: py(t), x2: PAD.left + iw, y2: py(t), class: 'grid' }));
    axes.append(el('text', { x: PAD.left - 6, y: py(t) + 4, class: 'tick', 'text-anchor': 'end' }, String(t)));
  }
  axes.append(
    el('text', { x: PAD.left + iw / 2, y: H - 6, class: 'axis-label', 'text-anchor': 'middle' }, `${display.label} (${display.unit})`),
  );
  axes.append(
    el(
      'text',
      { x: 12, y: PAD.top + ih / 2, class: 'axis-label', 'text-anchor': 'middle', transform: `rotate(-90 12 ${PAD.top + ih / 2})` },
      'Lactate (mmol/L)',
    ),
  );
  if (hrs.length) {
    for (const t of niceTicks(h0, h1)) {
      if (t < h0 || t > h1) continue;
      axes.append(el('text', { x: PAD.left + iw + 6, y: ph(t) + 4, class: 'tick hr-tick', 'text-anchor': 'start' }, String(t)));
    }
    const x = W - 10;
    axes.append(
      el(
        'text',
        { x, y: PAD.top + ih / 2, class: 'axis-label hr-label', 'text-anchor': 'middle', transform: `rotate(90 ${x} ${PAD.top + ih / 2})` },
        'Heart rate (bpm)',
      ),
    );
  }
  svg.append(axes);

  const marks = el('g', { class: 'thresholds' });
  markers.forEach((m, i) => {
    const x = markerXs[i];
    if (x === null || !Number.isFinite(x)) return;
    const colour = CATEGORY_COLOURS[m.category] ?? PALETTE[0];
    const g = el('g', { class: 'threshold-marker', 'data-method': m.method, 'data-category': m.category });
    g.append(
      el(
        'title',
        {},
        `${m.method}: ${display.text(x)} ${display.unit}${m.lactate != null ? `, ${Math.round(m.lactate * 100) / 100} mmol/L` : ''}`,
      ),
    );
    g.append(el('line', { x1: px(x), y1: PAD.top, x2: px(x), y2: PAD.top + ih, stroke: colour, class: 'threshold-line' }));
    if (m.lactate != null) g.append(el('circle', { cx: px(x), cy: py(m.lactate), r: 5, fill: colour, class: 'threshold-dot' }));
    marks.append(g);
  });
  svg.append(marks);

  const points = (ys, y) =>
    steps.map((s, i) => (xs[i] === null || ys(s) == null ? null : `${px(xs[i]).toFixed(1)},${y(ys(s)).toFixed(1)}`)).filter(Boolean);
  if (hrs.length) {
    svg.append(el('polyline', { points: points((s) => s.heart_rate, ph).join(' '), class: 'hr-line' }));
    steps.forEach(
      (s, i) =>
        s.heart_rate != null &&
        xs[i] !== null &&
        svg.append(el('circle', { cx: px(xs[i]), cy: ph(s.heart_rate), r: 3.5, class: 'hr-point' })),
    );
  }
  svg.append(el('polyline', { points: points((s) => s.lactate, py).join(' '), class: 'lactate-line' }));
  steps.forEach((s, i) => {
    if (xs[i] === null) return;
    const c = el('circle', { cx: px(xs[i]), cy: py(s.lactate), r: 4.5, class: 'lactate-point', 'data-intensity': s.intensity });
    c.append(
      el('title', {}, `${display.text(xs[i])} ${display.unit}: ${s.lactate} mmol/L${s.heart_rate != null ? `, ${s.heart_rate} bpm` : ''}`),
    );
    svg.append(c);
  });
  container.replaceChildren(svg);
  container.dataset.drawn = 'true';
  return svg;
}
