import type { TestRow, TraceRow } from '../../db/database.ts';
import type { ActivitySummaryRow } from '../../db/activities.ts';
import { formatInstant, formatLocal } from '../../lib/time.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';
import { sportLabel, testName } from './activities.ts';
import { headerOf, notice, utcOffset, type WebUser } from './web-common.ts';
import { formatSpeed, type Units } from './static/units.js';
import { LACTATE_FITS } from '../services/tests/analysis-model.ts';

/**
 * One test's page (/tests/{id}): its summary and results, the lactate curve with every method's
 * thresholds (drawn by static/test-analysis.js from GET /api/v1/tests/{id}/analysis, which also
 * builds the form that keeps chosen methods' results), its traces, the activities it overlaps, and
 * deleting it.
 */

const none = html`<span class="muted">—</span>`;

/** `2026-05-18 17:32` on the clock of `offsetSeconds`, in a <time> carrying the instant. */
export function localMinute(date: Date, offsetSeconds: number, seconds = false): Html {
  const local = formatLocal(date, offsetSeconds)
    .replace('T', ' ')
    .slice(0, seconds ? 19 : 16);
  return html`<time datetime="${formatInstant(date)}">${local}</time>`;
}

const MARKERS: [key: string, label: string][] = [
  ['lt1', 'LT1'],
  ['lt2', 'LT2'],
  ['vt1', 'VT1'],
  ['vt2', 'VT2'],
  ['mlss', 'MLSS'],
  ['fatmax', 'FatMax'],
  ['first_threshold', 'First threshold'],
  ['second_threshold', 'Second threshold'],
];
const NUMBERS: [key: string, label: string, unit: string][] = [
  ['vo2max', 'VO₂max', 'mL/min/kg'],
  ['vo2peak', 'VO₂peak', 'mL/min/kg'],
  ['vlamax', 'VLamax', 'mmol/L/s'],
  ['heart_rate_max', 'Maximal heart rate', 'bpm'],
  ['critical_power', 'Critical power', 'W'],
  ['critical_speed', 'Critical speed', 'm/s'],
  ['w_prime', 'W′', 'J'],
  ['d_prime', 'D′', 'm'],
  ['economy', 'Economy', ''],
  ['efficiency', 'Efficiency', ''],
];

const rounded = (v: number, digits: number) => String(Math.round(v * 10 ** digits) / 10 ** digits);

/** A Marker's members as text: `250 W · 150 bpm · 2.1 mmol/L`. */
function markerText(m: Record<string, unknown>, sport: string, units: Units): string {
  const n = (k: string) => (typeof m[k] === 'number' ? (m[k] as number) : undefined);
  return [
    n('power') !== undefined ? `${rounded(n('power')!, 0)} W` : undefined,
    n('speed') !== undefined ? formatSpeed(n('speed')!, sport, units) : undefined,
    n('heart_rate') !== undefined ? `${rounded(n('heart_rate')!, 0)} bpm` : undefined,
    n('lactate') !== undefined ? `${rounded(n('lactate')!, 2)} mmol/L` : undefined,
    n('vo2') !== undefined ? `VO₂ ${rounded(n('vo2')!, 1)} mL/min/kg` : undefined,
  ]
    .filter(Boolean)
    .join(' · ');
}

function resultsTable(t: TestRow, units: Units): Html {
  const r = t.results ?? {};
  const rows = [
    ...MARKERS.filter(([k]) => r[k] && typeof r[k] === 'object').map(
      ([k, label]) =>
        html`<tr data-result="${k}"><th scope="row">${label}</th><td>${markerText(r[k] as Record<string, unknown>, t.sport, units)}</td></tr>`,
    ),
    ...NUMBERS.filter(([k]) => typeof r[k] === 'number').map(
      ([k, label, unit]) =>
        html`<tr data-result="${k}"><th scope="row">${label}</th><td>${rounded(r[k] as number, 2)}${unit ? ` ${unit}` : ''}</td></tr>`,
    ),
  ];
  if (!rows.length)
    return html`<p id="no-results" class="muted">No results yet. Keep a method's values below, or let an application write them.</p>`;
  return html`<div class="table-scroll"><table id="results"><tbody>${rows}</tbody></table></div>`;
}

const VALUES: [key: 'lactate' | 'power' | 'heart_rate' | 'vo2' | 'rpe', label: string, unit: string][] = [
  ['lactate', 'Lactate', ' mmol/L'],
  ['power', 'Power', ' W'],
  ['heart_rate', 'Heart rate', ' bpm'],
  ['vo2', 'VO₂', ' mL/min/kg'],
  ['rpe', 'RPE', ''],
];

function traceValues(tr: TraceRow, units: Units): Html {
  const parts = VALUES.filter(([k]) => tr[k] !== null).map(
    ([k, label, unit]) => html`<span data-value="${k}">${label} ${String(tr[k])}${unit}</span>`,
  );
  if (tr.speed !== null) parts.push(html`<span data-value="speed">Speed ${formatSpeed(tr.speed, tr.sport, units)}</span>`);
  return parts.length ? html`${parts.map((p, i) => html`${i ? html`<br>` : ''}${p}`)}` : none;
}

function tracesTable(t: TestRow, traces: TraceRow[], units: Units): Html {
  if (!traces.length) return html`<p id="no-test-traces" class="muted">No traces: none names this test or lies in its window.</p>`;
  return html`<div class="table-scroll"><table class="wide" id="test-traces">
<thead><tr><th>Local time</th><th>Values</th><th>Belongs by</th><th>Notes</th></tr></thead>
<tbody>${traces.map(
    (tr) => html`<tr data-trace-id="${tr.id}">
<td>${localMinute(tr.time, tr.utc_offset_seconds, true)}</td>
<td>${traceValues(tr, units)}</td>
<td>${tr.test_id === t.id ? 'its test id' : 'its time'}</td>
<td>${tr.notes ?? none}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function activitiesList(activities: ActivitySummaryRow[]): Html {
  if (!activities.length) return html`<p id="no-test-activities" class="muted">No activity overlaps the test's time.</p>`;
  return html`<ul id="test-activities" class="test-links">${activities.map(
    (a) => html`<li><a href="/activities/${a.id}">${sportLabel(a.sport)}, ${localMinute(a.start_time, a.utc_offset_seconds)}</a></li>`,
  )}</ul>`;
}

/** Where static/test-analysis.js draws the lactate curve, lists the methods and builds the form that keeps results. */
function analysisSection(t: TestRow): Html {
  return html`<section id="lactate-analysis" class="panel" data-test-id="${t.id}" data-sport="${t.sport}" aria-labelledby="lactate-heading">
<h2 id="lactate-heading">Lactate curve</h2>
<form id="analysis-options" method="get" class="analysis-options">
<label>Fit <select name="fit">${LACTATE_FITS.map((f) => html`<option value="${f}">${f}</option>`)}</select></label>
<label><input type="checkbox" name="include_baseline" value="true"> Resting sample in the fit</label>
<button type="submit">Apply</button>
</form>
<p id="analysis-status" class="muted" role="status">Loading the analysis…</p>
<noscript><p class="error">The lactate curve needs JavaScript.</p></noscript>
<div id="lactate-chart" class="lactate-chart"></div>
<div id="lactate-methods"></div>
<form id="accept-form" class="stack" hidden>
<h3>Keep results</h3>
<p class="hint">Choose the method whose value becomes each result; the others stay as they are.</p>
<div id="accept-choices" class="accept-choices"></div>
<p id="accept-error" class="error" role="alert" hidden></p>
<button type="submit" id="accept-submit">Keep the chosen results</button>
</form>
</section>`;
}

export interface TestView {
  test: TestRow;
  traces: TraceRow[];
  activities: ActivitySummaryRow[];
  message?: string | undefined;
}

export function testPage(user: WebUser, v: TestView): string {
  const t = v.test;
  return page(
    { title: testName(t), user: headerOf(user), styles: ['/static/tests.css'], scripts: ['/static/test-analysis.js'] },
    html`<p><a href="/tests">← All tests</a></p>
<h1 id="test-title">${testName(t)}</h1>
${notice(v.message)}
<dl id="test" data-test-id="${t.id}">
  <dt>Sport</dt><dd id="test-sport"><span data-sport="${t.sport}">${sportLabel(t.sport)}</span></dd>
  <dt>Start</dt><dd id="test-start">${localMinute(t.start_time, t.utc_offset_seconds, true)} <span class="muted">(${utcOffset(t.utc_offset_seconds)})</span></dd>
  <dt>End</dt><dd id="test-end">${localMinute(t.end_time, t.end_utc_offset_seconds, true)}</dd>
  ${t.tags.length ? html`<dt>Tags</dt><dd id="test-tags">${t.tags.map((tag) => html`<code>${tag}</code> `)}</dd>` : ''}
  <dt>Created by</dt><dd>${t.created_by ? html`<code>${t.created_by}</code>` : 'this site or a personal token'}</dd>
  <dt>Id</dt><dd><code id="test-id">${t.id}</code></dd>
</dl>
<h2>Results</h2>
${resultsTable(t, user.units)}
${analysisSection(t)}
<h2>Traces</h2>
${tracesTable(t, v.traces, user.units)}
<h2>Activities</h2>
${activitiesList(v.activities)}
<h2>Delete test</h2>
<p>Deleting removes the test and its results. Its traces stay, without the link to it.</p>
<form method="post" action="/tests/${t.id}/delete" class="inline" id="delete-form">
  <button type="submit" class="danger" id="delete-test">Delete test</button>
</form>`,
  );
}
