// A test's page (/tests/{id}): the lactate curve with every method's threshold, the methods with their
// value or the reason they do not apply, and a form keeping chosen methods' values as the test's
// results — all from the public API (GET /api/v1/tests/{id}/analysis, POST …/analysis/accept).

import { apiJson } from './api-client.js';
import { drawLactateChart } from './lactate-chart.js';
import { formatDuration } from './charts.js';
import { metricDisplay, pageUnits } from './units.js';

const section = document.getElementById('lactate-analysis');
const status = document.getElementById('analysis-status');

/** The Marker members a lactate method may fill, with their labels. */
const LACTATE_MEMBERS = [
  ['lt1', 'LT1'],
  ['lt2', 'LT2'],
];
const MODEL_MEMBERS = {
  power: [
    ['critical_power', 'Critical power'],
    ['w_prime', 'W′'],
  ],
  speed: [
    ['critical_speed', 'Critical speed'],
    ['d_prime', 'D′'],
  ],
};
const MAXIMA_LABELS = { heart_rate_max: 'Maximal heart rate', vo2max: 'VO₂max', vo2peak: 'VO₂peak' };

function node(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  e.append(...children);
  return e;
}

/** A marker's intensity in API units (power or speed, per `metric`). */
const intensityOf = (marker, metric) => (marker ? (marker[metric ?? 'power'] ?? marker.power ?? marker.speed ?? null) : null);

function markerText(marker, metric, display) {
  const x = intensityOf(marker, metric);
  const parts = [];
  if (x !== null && x !== undefined) parts.push(`${display.text(display.convert(x))} ${display.unit}`);
  if (marker.heart_rate != null) parts.push(`${Math.round(marker.heart_rate)} bpm`);
  if (marker.lactate != null) parts.push(`${Math.round(marker.lactate * 100) / 100} mmol/L`);
  return parts.join(' · ');
}

function methodsTable(analysis, display) {
  const rows = analysis.lactate.map((m) =>
    node(
      'tr',
      { 'data-method': m.method, 'data-applies': m.marker ? 'true' : 'false' },
      node('td', {}, m.category),
      node('th', { scope: 'row' }, m.method),
      node('td', { class: 'method-fitting muted' }, m.fitting),
      node(
        'td',
        { class: m.marker ? 'method-value' : 'method-reason muted' },
        m.marker ? markerText(m.marker, analysis.metric, display) : (m.reason ?? '—'),
      ),
    ),
  );
  const table = node(
    'table',
    { class: 'wide', id: 'methods-table' },
    node(
      'thead',
      {},
      node('tr', {}, node('th', {}, 'Category'), node('th', {}, 'Method'), node('th', {}, 'Fit'), node('th', {}, 'Threshold')),
    ),
    node('tbody', {}, ...rows),
  );
  return node('div', { class: 'table-scroll' }, table);
}

function choice(member, label, options) {
  const select = node('select', { id: `accept-${member}`, name: member }, node('option', { value: '' }, '— keep as it is —'));
  for (const [value, text] of options) select.append(node('option', { value }, text));
  return node('div', { class: 'accept-choice' }, node('label', { for: `accept-${member}` }, label), select);
}

function criticalText(c, metric) {
  const unit = metric === 'speed' ? 'm/s' : 'W';
  const work = metric === 'speed' ? 'm' : 'J';
  return `${c.model}: ${Math.round(c.critical_intensity * 10) / 10} ${unit}${c.work_capacity != null ? `, ${Math.round(c.work_capacity)} ${work}` : ''}`;
}

/** The selects of the accept form: lactate methods for lt1 and lt2, models, maxima; only what applies. */
function acceptChoices(analysis, display) {
  const applying = analysis.lactate.filter((m) => m.marker);
  const choices = applying.length
    ? LACTATE_MEMBERS.map(([member, label]) =>
        choice(
          member,
          label,
          applying.map((m) => [m.method, `${m.method} (${markerText(m.marker, analysis.metric, display)})`]),
        ),
      )
    : [];
  const models = (analysis.critical ?? []).filter((c) => c.critical_intensity != null);
  if (models.length && MODEL_MEMBERS[analysis.metric])
    for (const [member, label] of MODEL_MEMBERS[analysis.metric])
      choices.push(
        choice(
          member,
          label,
          models.map((c) => [c.model, criticalText(c, analysis.metric)]),
        ),
      );
  for (const [member, found] of Object.entries(analysis.maxima ?? {}))
    if (found?.value != null) choices.push(choice(member, MAXIMA_LABELS[member] ?? member, [['highest', `highest: ${found.value}`]]));
  return choices;
}

function effortsList(analysis) {
  if (!analysis.efforts?.length) return null;
  return node(
    'p',
    { id: 'efforts', class: 'muted' },
    `Maximal efforts: ${analysis.efforts.map((e) => `${formatDuration(e.duration)} at ${Math.round(e.value * 10) / 10}`).join(', ')}.`,
  );
}

function ignoredList(analysis) {
  if (!analysis.ignored?.length) return null;
  const reasons = [...new Set(analysis.ignored.map((i) => i.reason))];
  return node('p', { id: 'ignored-traces', class: 'muted' }, `${analysis.ignored.length} traces left out: ${reasons.join('; ')}.`);
}

async function accept(testId, form, error) {
  const body = Object.fromEntries([...new FormData(form)].filter(([, v]) => v !== ''));
  error.hidden = true;
  if (!Object.keys(body).length) {
    error.textContent = 'Choose a method for at least one result.';
    error.hidden = false;
    return;
  }
  try {
    await apiJson(`/api/v1/tests/${testId}/analysis/accept${optionsQuery()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const kept = new URLSearchParams(optionsQuery());
    kept.set('accepted', '1');
    location.assign(`/tests/${testId}?${kept}`);
  } catch (e) {
    error.textContent = `Not kept: ${e.message}`;
    error.hidden = false;
  }
}

function show(testId, analysis) {
  const display = metricDisplay(analysis.metric === 'speed' ? 'speed' : 'power', section.dataset.sport, pageUnits());
  const steps = analysis.steps.filter((s) => s.lactate != null && s.intensity != null);
  const markers = analysis.lactate
    .filter((m) => m.marker && intensityOf(m.marker, analysis.metric) != null)
    .map((m) => ({ method: m.method, category: m.category, intensity: intensityOf(m.marker, analysis.metric), lactate: m.marker.lactate }));
  const chart = document.getElementById('lactate-chart');
  if (steps.length) drawLactateChart(chart, { steps, markers, display });
  status.textContent = steps.length
    ? `${steps.length} steps, ${markers.length} of ${analysis.lactate.length} methods give a threshold.`
    : 'No step with an intensity and a lactate: add traces to the test to see its curve.';
  const methods = document.getElementById('lactate-methods');
  methods.replaceChildren(
    ...[analysis.lactate.length ? methodsTable(analysis, display) : null, effortsList(analysis), ignoredList(analysis)].filter(Boolean),
  );
  const choices = acceptChoices(analysis, display);
  const form = document.getElementById('accept-form');
  if (!choices.length) return;
  document.getElementById('accept-choices').replaceChildren(...choices);
  form.hidden = false;
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    accept(testId, form, document.getElementById('accept-error'));
  });
}

/** The analysis options of the page's URL (its options form submits them), as the API's query: `?fit=…&include_baseline=true` or ''. */
function optionsQuery() {
  const page = new URLSearchParams(location.search);
  const q = new URLSearchParams();
  for (const name of ['fit', 'include_baseline']) if (page.get(name)) q.set(name, page.get(name));
  return q.size ? `?${q}` : '';
}

/** The options form shows what the page's URL asks for. */
function showOptions() {
  const form = document.getElementById('analysis-options');
  if (!form) return;
  const page = new URLSearchParams(location.search);
  if (page.get('fit')) form.elements.fit.value = page.get('fit');
  form.elements.include_baseline.checked = page.get('include_baseline') === 'true';
}

if (section) {
  const testId = section.dataset.testId;
  section.dataset.state = 'loading';
  showOptions();
  apiJson(`/api/v1/tests/${testId}/analysis${optionsQuery()}`)
    .then((analysis) => {
      show(testId, analysis);
      section.dataset.state = 'ready';
    })
    .catch((e) => {
      status.textContent = `The analysis could not be loaded: ${e.message}`;
      status.classList.add('error');
      section.dataset.state = 'error';
    });
}
