// The curves page (/curves): the longitudinal power- or speed-duration curve of a sport over a date
// range, compared with a second range, with fatigue-state curves (`after`: work done in kJ, or
// distance in metres for speed; computed by duration or by intensity), the value-indexed view and
// the intensity-duration model and the newest lab test's CP/W′ hyperbola (test-curve.js). Everything comes from the public API; the choices live in the
// URL query (shareable; the back button returns to the previous choices).

import { apiFrame, apiJson, ApiError, latestDay } from './api-client.js';
import { durationCurve, levelCurve, sampledCurve, sampledLevelCurve, splitByAfter, drawCurveChart } from './curve-chart.js';
import { formatMetric, isoDay, rootSport, sportLabel } from './labels.js';
import { formatSpeed, pageUnits } from './units.js';
import { testCurve, testNote } from './test-curve.js';

const PRESETS = {
  '6w': { label: 'Last 6 weeks', days: 42 },
  '90d': { label: 'Last 90 days', days: 90 },
  year: { label: 'This year' },
  all: { label: 'All time' },
};
const MAX_AFTER = 5;
/** Typical fatigue states of each unit: kJ of work for power; metres for speed (a ride covers more than a run). */
const TYPICAL_AFTER = { power: [500, 1000, 1500], speedCycling: [20000, 50000, 100000], speed: [5000, 10000, 20000] };
const YEAR_DAYS = 366;
const MODEL_COLOR = '#1d2330';

const $ = (id) => document.getElementById(id);

/** The 90 days up to a day, as a custom range's choices. */
export function ninetyDaysTo(day) {
  return { range: 'custom', start: isoDay(new Date(`${day}T00:00:00Z`), -89), end: day };
}

/** The page's choices from a URL query, with defaults. */
export function readState(search) {
  const q = new URLSearchParams(search);
  const pick = (key, allowed, fallback) => (allowed.includes(q.get(key)) ? q.get(key) : fallback);
  const ranges = [...Object.keys(PRESETS), 'custom'];
  return {
    sport: q.get('sport'),
    metric: pick('metric', ['power', 'speed'], null),
    range: pick('range', ranges, '90d'),
    start: q.get('start') ?? '',
    end: q.get('end') ?? '',
    compare: pick('compare', ['none', ...ranges], 'none'),
    compareStart: q.get('compare_start') ?? '',
    compareEnd: q.get('compare_end') ?? '',
    after: q.get('after') ?? '',
    afterBy: pick('after_by', ['duration', 'intensity'], null),
    view: pick('view', ['duration', 'value'], 'duration'),
    model: q.get('model') === '1',
    test: q.get('test') === '1',
  };
}

/** The URL query of the choices (defaults left out, except the sport and metric, so a shared link shows the same curve). */
export function queryOf(s) {
  const q = new URLSearchParams();
  if (s.sport !== null) q.set('sport', s.sport);
  if (s.metric) q.set('metric', s.metric);
  q.set('range', s.range);
  if (s.range === 'custom') {
    if (s.start) q.set('start', s.start);
    if (s.end) q.set('end', s.end);
  }
  if (s.compare !== 'none') q.set('compare', s.compare);
  if (s.compare === 'custom') {
    if (s.compareStart) q.set('compare_start', s.compareStart);
    if (s.compareEnd) q.set('compare_end', s.compareEnd);
  }
  if (s.after.trim()) {
    const after = parseAfter(s.after);
    q.set('after', after.error ? s.after.trim() : after.values.join(','));
  }
  if (s.metric === 'power' && s.afterBy === 'intensity') q.set('after_by', 'intensity');
  if (s.view !== 'duration') q.set('view', s.view);
  if (s.model) q.set('model', '1');
  if (s.test) q.set('test', '1');
  return q.toString();
}

/** `{start, end, label}` of a range choice; start null for all time. Dates are UTC days, as the API's "today". */
export function resolveRange(key, start, end) {
  const today = isoDay();
  if (key === 'custom') {
    const e = end || today;
    return { start: start || null, end: e, label: `${start || 'first activity'} to ${e}` };
  }
  const preset = PRESETS[key];
  const from = preset.days ? isoDay(new Date(), 1 - preset.days) : key === 'year' ? `${today.slice(0, 4)}-01-01` : null;
  return { start: from, end: today, label: preset.label };
}

/** How the fatigue-state curves are computed (the API's `by`): by duration (power's default) or by intensity (speed's only). */
export function afterByOf(s) {
  return s.metric === 'speed' ? 'intensity' : (s.afterBy ?? 'duration');
}

/** The typical fatigue states for a metric and sport, in its unit. */
export function typicalAfter(metric, sport) {
  if (metric === 'power') return TYPICAL_AFTER.power;
  return sport && rootSport(sport) === 'cycling' ? TYPICAL_AFTER.speedCycling : TYPICAL_AFTER.speed;
}

/** The fatigue states asked for: up to 5 non-negative numbers, or an error message. */
export function parseAfter(text) {
  const parts = text.split(/[\s,;]+/).filter(Boolean);
  if (parts.length > MAX_AFTER) return { error: `At most ${MAX_AFTER} fatigue states.` };
  if (parts.some((p) => !/^\d+(\.\d+)?$/.test(p))) return { error: 'Fatigue states are non-negative numbers separated by commas.' };
  return { values: parts.map(Number) };
}

function curvePath(state, range, extra = {}) {
  const q = new URLSearchParams();
  if (state.sport) q.set('sport', state.sport);
  q.set('metric', state.metric);
  if (range.start) q.set('start', range.start);
  q.set('end', range.end);
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return `/api/v1/activities/longitudinal-mean-max?${q}`;
}

/** The range's last day with an activity: the sport's newest activity (`latest`) when it lies inside the range, else the range's end. */
function lastActiveDay(range, latest) {
  return latest && latest < range.end && (!range.start || latest >= range.start) ? latest : range.end;
}

/**
 * With `after` the API takes at most a year: the range's last year with activities, i.e. the year up
 * to lastActiveDay, so an old history still has its fatigue states.
 */
function afterRange(range, latest) {
  const end = lastActiveDay(range, latest);
  const yearBefore = isoDay(new Date(Date.parse(`${end}T00:00:00Z`)), 1 - YEAR_DAYS);
  const clamped = !range.start || range.start < yearBefore;
  return { range: { ...range, start: clamped ? yearBefore : range.start, end }, clamped };
}

/** The legend's (and readout's) name of a fatigue state: the work done, or distance covered, before. */
export function afterLabel(value, metric) {
  return metric === 'power' ? `after ${value} kJ` : `after ${value} m`;
}

/** Fetch everything the choices need, then build the curves. */
async function loadCurves(state) {
  const { metric, view } = state;
  const main = resolveRange(state.range, state.start, state.end);
  const compare = state.compare === 'none' ? null : resolveRange(state.compare, state.compareStart, state.compareEnd);
  const after = parseAfter(state.after);
  if (after.error) throw new ApiError(422, after.error);
  const latest = await latestDay(state.sport);
  const afterWindow = after.values.length ? afterRange(main, latest) : null;
  const by = afterByOf(state);
  const byDuration = by === 'duration';
  // The model is fitted to 90 days: those up to the range's end, or up to its newest activity when older.
  const modelEnd = lastActiveDay(main, latest);
  const modelQuery = new URLSearchParams({ metric, date: modelEnd });
  if (state.sport) modelQuery.set('sport', state.sport);

  const [mainFrame, compareFrame, afterFrame, model] = await Promise.all([
    apiFrame(curvePath(state, main)),
    compare ? apiFrame(curvePath(state, compare)) : null,
    afterWindow
      ? apiFrame(curvePath(state, afterWindow.range, { after: after.values.join(','), by, ...(byDuration ? { durations: 'all' } : {}) }))
      : null,
    state.model || state.test ? apiJson(`/api/v1/profile/intensity-duration-model?${modelQuery}`) : null,
  ]);

  const toCurve = view === 'value' ? levelCurve : durationCurve;
  const sampledToCurve = view === 'value' ? sampledLevelCurve : sampledCurve;
  const curves = [{ label: main.label, role: 'main', ...toCurve(mainFrame, metric) }];
  if (compare) curves.push({ label: compare.label, role: 'compare', ...toCurve(compareFrame, metric) });
  if (afterFrame) {
    // Every state asked for is a series (the legend names it), drawn empty when no activity reaches it.
    const parts = new Map(splitByAfter(afterFrame).map((p) => [Number(p.after), p.frame]));
    for (const value of new Set(after.values)) {
      const frame = parts.get(value) ?? { duration: [], [metric]: [] };
      curves.push({
        label: afterLabel(value, metric),
        role: 'after',
        after: value,
        ...(byDuration ? sampledToCurve(frame, metric) : toCurve(frame, metric)),
      });
    }
  }
  if (state.model && model?.parameters) {
    const x = model.curve.map((p) => p.duration);
    const y = model.curve.map((p) => p.intensity);
    const points = view === 'value' ? { x: y.reverse(), y: x.reverse() } : { x, y };
    const p = model.parameters;
    curves.push({ label: `Model (fitted ${p.start} to ${p.end})`, role: 'model', ...points, color: MODEL_COLOR, dash: [6, 4] });
  }
  if (state.test && model?.test) curves.push(testCurve(model.test, metric, view, state.sport || null));
  return { main, compare, afterWindow, model, modelEnd, latest, curves };
}

function showModel(model, state, end, main) {
  const section = $('model-section');
  section.hidden = !state.model;
  if (!state.model) return;
  const dl = $('model-parameters');
  const note = $('model-note');
  if (!model?.parameters) {
    dl.replaceChildren();
    const from = isoDay(new Date(`${end}T00:00:00Z`), -89);
    note.textContent = `Too few best efforts from ${from} to ${end} (the model is fitted to 90 days) to fit it.`;
    return;
  }
  const p = model.parameters;
  const power = p.metric === 'power';
  // Speeds as the user reads them: a pace for running (api/web/static/units.js); the error, a difference, as a speed.
  const shown = (v) => (power ? formatMetric(v, p.metric) : formatSpeed(v, state.sport || null, pageUnits()));
  const rows = [
    [power ? 'Critical power' : 'Critical speed', shown(p.critical_intensity), 'critical'],
    [power ? 'W′' : 'D′', power ? `${(p.work_capacity / 1000).toFixed(1)} kJ` : `${Math.round(p.work_capacity)} m`, 'work-capacity'],
    [power ? 'Pmax' : 'Highest speed', shown(p.max_intensity), 'max'],
    ['Fit error (RMSE)', power ? formatMetric(p.rmse, p.metric) : formatSpeed(p.rmse, null, pageUnits()), 'rmse'],
    ['Best efforts fitted', String(p.efforts), 'efforts'],
  ];
  dl.replaceChildren(
    ...rows.flatMap(([term, value, key]) => {
      const dt = document.createElement('dt');
      dt.textContent = term;
      const dd = document.createElement('dd');
      dd.textContent = value;
      dd.dataset.parameter = key;
      return [dt, dd];
    }),
  );
  const over =
    main.start === p.start && main.end === p.end
      ? ''
      : ` It is fitted to those 90 days only, so it may lie below the curve of ${main.label.toLowerCase()}.`;
  note.textContent = `3-parameter critical power model fitted to the best efforts (up to 30 minutes) from ${p.start} to ${p.end}.${over}`;
}

function showTest(loaded, state) {
  const note = $('test-note');
  note.hidden = !state.test;
  if (!state.test) return;
  const windowStart = isoDay(new Date(`${loaded.modelEnd}T00:00:00Z`), -89);
  const sport = state.sport || null;
  note.textContent = testNote(loaded.model?.test ?? null, { metric: state.metric, sport, windowStart, windowEnd: loaded.modelEnd });
}

function describe(loaded, state) {
  const main = loaded.curves.find((c) => c.role === 'main');
  const activities = new Set(main.activity.filter(Boolean)).size;
  const what = `${state.sport ? sportLabel(state.sport) : 'All sports'}, ${state.metric}`;
  if (!main.x.length) {
    const { latest } = loaded;
    const range = loaded.main;
    if (!latest) return `${what}: no activity of this sport yet.`;
    if (range.start && latest < range.start) return `${what}: no activity in ${range.label.toLowerCase()}; the newest is from ${latest}.`;
    return `${what}: the activities of ${range.label.toLowerCase()} record no ${state.metric}.`;
  }
  const parts = [
    `${what}: the curve's points come from ${activities} ${activities === 1 ? 'activity' : 'activities'} (${loaded.main.label.toLowerCase()}).`,
  ];
  const unreached = loaded.curves.filter((c) => c.role === 'after' && !c.x.length).map((c) => c.after);
  const w = loaded.afterWindow?.range;
  if (unreached.length)
    parts.push(
      `No activity from ${w.start} to ${w.end} reached ${unreached.join(', ')} ${state.metric === 'speed' ? 'm' : 'kJ'}: nothing to draw after that.`,
    );
  if (loaded.afterWindow?.clamped) parts.push(`Fatigue states cover at most a year: here ${w.start} to ${w.end}.`);
  return parts.join(' ');
}

// Controls ---------------------------------------------------------------------------------------

function setControls(s) {
  $('sport').value = s.sport ?? '';
  $('metric').value = s.metric;
  for (const b of document.querySelectorAll('#range-presets button')) b.setAttribute('aria-pressed', String(b.dataset.range === s.range));
  const main = resolveRange(s.range, s.start, s.end);
  $('start').value = main.start ?? '';
  $('end').value = main.end;
  $('compare').value = s.compare;
  const compare = s.compare === 'none' ? null : resolveRange(s.compare, s.compareStart, s.compareEnd);
  $('compare-dates').hidden = s.compare !== 'custom';
  $('compare-start').value = compare?.start ?? '';
  $('compare-end').value = compare?.end ?? '';
  $('after').value = s.after;
  const unit = s.metric === 'speed' ? 'm' : 'kJ';
  $('after-unit').textContent = unit;
  const typical = typicalAfter(s.metric, s.sport);
  $('after-typical').textContent = `${typical.join(', ')} ${unit}`;
  $('after').placeholder = `e.g. ${typical.slice(0, 2).join(', ')}`;
  $('after-by').value = afterByOf(s);
  $('after-by').querySelector('option[value="duration"]').disabled = s.metric === 'speed';
  for (const r of document.querySelectorAll('input[name="view"]')) r.checked = r.value === s.view;
  $('model').checked = s.model;
  $('lab-test').checked = s.test;
}

function stateFromControls(previous, changed) {
  const s = {
    ...previous,
    sport: $('sport').value,
    metric: $('metric').value,
    compare: $('compare').value,
    after: $('after').value,
    afterBy: previous.metric === 'speed' ? previous.afterBy : $('after-by').value,
    view: document.querySelector('input[name="view"]:checked')?.value ?? 'duration',
    model: $('model').checked,
    test: $('lab-test').checked,
  };
  if (changed === 'start' || changed === 'end') Object.assign(s, { range: 'custom', start: $('start').value, end: $('end').value });
  if (changed === 'compare-start' || changed === 'compare-end')
    Object.assign(s, { compare: 'custom', compareStart: $('compare-start').value, compareEnd: $('compare-end').value });
  if (changed === 'compare' && s.compare === 'custom' && !s.compareStart) {
    const main = resolveRange(previous.range, previous.start, previous.end);
    Object.assign(s, { compareStart: main.start ?? '', compareEnd: main.end });
  }
  if (changed === 'sport') s.metric = defaultMetric(s.sport);
  // Another unit (kJ and metres): the states typed mean nothing in it, so the new unit's typical ones.
  if (s.after.trim() && s.metric !== previous.metric) {
    s.after = typicalAfter(s.metric, s.sport).join(', ');
  }
  return s;
}

function defaultMetric(sport) {
  return sport && rootSport(sport) !== 'cycling' ? 'speed' : 'power';
}

function fillSports(sports) {
  const select = $('sport');
  const roots = [...new Set(sports.map(rootSport))].sort();
  const option = (value, label) => Object.assign(document.createElement('option'), { value, textContent: label });
  select.replaceChildren(
    option('', 'All sports'),
    ...roots.map((r) => option(r, sportLabel(r))),
    ...sports.filter((s) => !roots.includes(s)).map((s) => option(s, sportLabel(s))),
  );
  return roots;
}

// Rendering --------------------------------------------------------------------------------------

let renderSeq = 0;
/** Moves the page to other choices (set by start: a history entry, the controls, a render). */
let jumpTo = (_choices) => {};

/**
 * The newest activity before `before` (a day) that did the work (kJ, power) or covered the distance
 * (m, speed) of a fatigue state: where that state can be drawn. Among the 1,000 before it; null if none.
 */
async function newestReaching(state, value, before) {
  const q = new URLSearchParams({ end: isoDay(new Date(`${before}T00:00:00Z`), -1), limit: '1000' });
  if (state.sport) q.set('sport', state.sport);
  const list = await apiJson(`/api/v1/activities/?${q}`);
  const reached = (a) => (state.metric === 'power' ? (a.summary?.power?.work ?? 0) >= value : (a.summary?.distance?.sum ?? 0) >= value);
  return list.find(reached)?.start_local.slice(0, 10) ?? null;
}

/**
 * Ways forward under a curve that cannot be drawn: an empty range whose sport has activities
 * elsewhere gets buttons to a range that has them; a fatigue state no activity of its window
 * reached, a button to the year up to the newest activity before it that did.
 */
async function showWayForward(loaded, state, seq) {
  const way = $('curve-way');
  const main = loaded.curves.find((c) => c.role === 'main');
  const { latest } = loaded;
  const button = (id, text, choices) => {
    const b = Object.assign(document.createElement('button'), { type: 'button', id, className: 'small secondary', textContent: text });
    b.addEventListener('click', () => jumpTo(choices));
    return b;
  };
  const buttons = [];
  if (!main.x.length && latest && loaded.main.start && latest < loaded.main.start) {
    buttons.push(
      button('way-latest', `Show the 90 days up to ${latest}`, ninetyDaysTo(latest)),
      button('way-all', 'All time', { range: 'all' }),
    );
  }
  const unreached = loaded.curves.filter((c) => c.role === 'after' && !c.x.length).map((c) => c.after);
  if (unreached.length && loaded.afterWindow) {
    const target = Math.min(...unreached);
    const day = await newestReaching(state, target, loaded.afterWindow.range.start);
    if (day) {
      const unit = state.metric === 'speed' ? 'm' : 'kJ';
      const yearTo = { range: 'custom', start: isoDay(new Date(`${day}T00:00:00Z`), 1 - YEAR_DAYS), end: day };
      buttons.push(button('way-after', `Show the year up to ${day}, when an activity passed ${target} ${unit}`, yearTo));
    }
  }
  if (seq !== renderSeq) return; // (a newer render owns the page now)
  way.hidden = !buttons.length;
  way.replaceChildren(...buttons.flatMap((b, i) => (i ? [' ', b] : [b])));
}

async function render(state) {
  const seq = ++renderSeq;
  const chartEl = $('curve-chart');
  const status = $('curve-status');
  status.classList.remove('error');
  status.textContent = 'Loading…';
  chartEl.setAttribute('aria-busy', 'true');
  try {
    const loaded = await loadCurves(state);
    if (seq !== renderSeq) return;
    drawCurveChart(chartEl, loaded.curves, {
      metric: state.metric,
      view: state.view,
      readout: $('curve-readout'),
      sport: state.sport || null,
    });
    chartEl.dataset.query = location.search.slice(1);
    $('curve-readout').replaceChildren(
      Object.assign(document.createElement('li'), { className: 'muted', textContent: 'Point at the chart to read each curve.' }),
    );
    showModel(loaded.model, state, loaded.modelEnd, loaded.main);
    showTest(loaded, state);
    status.textContent = describe(loaded, state);
    await showWayForward(loaded, state, seq);
  } catch (err) {
    if (seq !== renderSeq) return;
    status.classList.add('error');
    status.textContent =
      err instanceof ApiError
        ? `Could not draw the curve: ${typeof err.detail === 'string' ? err.detail : (err.detail?.[0]?.msg ?? err.message)}`
        : String(err);
  } finally {
    if (seq === renderSeq) chartEl.removeAttribute('aria-busy');
  }
}

async function start() {
  let state = readState(location.search);
  const sports = await apiJson('/api/v1/profile/sports/');
  const roots = fillSports(sports);
  if (!sports.length) {
    $('curves-empty').hidden = false;
    $('curves-main').hidden = true;
    return;
  }
  if (state.sport === null || (state.sport && !roots.includes(state.sport) && !sports.includes(state.sport))) {
    state.sport = roots.includes('cycling') ? 'cycling' : roots[0];
  }
  state.metric ??= defaultMetric(state.sport);
  // Opened without a range: one that holds the sport's newest activity (the last 90 days, or the 90 days up to it).
  const asked = new URLSearchParams(location.search);
  if (!asked.has('range') && !asked.has('start')) {
    const latest = await latestDay(state.sport);
    if (latest && latest < resolveRange('90d').start) Object.assign(state, ninetyDaysTo(latest));
  }
  history.replaceState(null, '', `?${queryOf(state)}`);
  setControls(state);

  const change = (changed) => {
    state = stateFromControls(state, changed);
    if (changed !== 'after' || !parseAfter(state.after).error) history.pushState(null, '', `?${queryOf(state)}`);
    setControls(state);
    render(state);
  };
  for (const id of [
    'sport',
    'metric',
    'start',
    'end',
    'compare',
    'compare-start',
    'compare-end',
    'after',
    'after-by',
    'model',
    'lab-test',
  ]) {
    $(id).addEventListener('change', () => change(id));
  }
  for (const r of document.querySelectorAll('input[name="view"]')) r.addEventListener('change', () => change('view'));
  for (const b of document.querySelectorAll('#range-presets button')) {
    b.addEventListener('click', () => {
      state = { ...state, range: b.dataset.range };
      change('range');
    });
  }
  $('after-defaults').addEventListener('click', () => {
    $('after').value = typicalAfter(state.metric, state.sport).join(', ');
    change('after');
  });
  jumpTo = (choices) => {
    state = { ...state, ...choices };
    change('range');
  };
  $('curve-controls').addEventListener('submit', (e) => e.preventDefault());
  window.addEventListener('popstate', () => {
    state = { ...readState(location.search) };
    state.metric ??= defaultMetric(state.sport);
    setControls(state);
    render(state);
  });
  render(state);
}

start().catch((err) => {
  $('curve-status').classList.add('error');
  $('curve-status').textContent = `Could not load your sports: ${err.message}`;
});
