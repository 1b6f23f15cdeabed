import type { Ctx } from '../http/context.ts';
import type { ActivityRow, TestRow } from '../../db/database.ts';
import { findActivity, listActivities } from '../../db/activities.ts';
import { testsOverlapping } from '../../db/tests.ts';
import { isUuid } from '../../lib/ids.ts';
import { rootSport } from '../../lib/sports.ts';
import { formatInstant, formatLocal } from '../../lib/time.ts';
import { removeActivity } from '../services/activities/remove-activity.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html, type Html } from './html.ts';
import { dataChecks } from './activity-checks.ts';
import { clockDuration, grouped, metricLabel, num, statsOf } from './activity-format.ts';
import { page } from './layout.ts';
import { formBody } from './forms.ts';
import { distanceValue, formatDistance, speedDisplay, type Units } from './static/units.js';
import {
  asActor,
  headerOf,
  mayChangeData,
  notFound,
  notice,
  pageNumber,
  requireWebUser,
  sendHtml,
  subjectId,
  utcOffset,
  type WebUser,
} from './web-common.ts';

/** The signed-in user's activities: a paged list, one activity's details, and deleting one. */

export const ACTIVITIES_PER_PAGE = 50;

// Display ----------------------------------------------------------------------------------------

/** `2026-05-18 17:32` on the athlete's clock at the time, in a <time> element carrying the instant. */
function localTime(date: Date, offsetSeconds: number, opts: { seconds?: boolean; timeOnly?: boolean } = {}): Html {
  const local = formatLocal(date, offsetSeconds).replace('T', ' ');
  const shown = opts.timeOnly ? local.slice(11, opts.seconds ? 19 : 16) : local.slice(0, opts.seconds ? 19 : 16);
  return html`<time datetime="${formatInstant(date)}">${shown}</time>`;
}

/** `cycling.road+indoor` as `Cycling › road (indoor)`. */
export function sportLabel(sport: string): string {
  const [path = '', ...modifiers] = sport.split('+');
  const parts = path.split('.').map((p) => p.replace(/_/g, ' '));
  const head = parts.map((p, i) => (i === 0 ? p.charAt(0).toUpperCase() + p.slice(1) : p)).join(' › ');
  return modifiers.length ? `${head} (${modifiers.map((m) => m.replace(/_/g, ' ')).join(', ')})` : head;
}

/** A test's name in lists and links: its title, else its sport and local start. */
export function testName(t: Pick<TestRow, 'title' | 'sport' | 'start_time' | 'utc_offset_seconds'>): string {
  return t.title ?? `${sportLabel(t.sport)} test, ${formatLocal(t.start_time, t.utc_offset_seconds).replace('T', ' ').slice(0, 16)}`;
}

/** A distance as the user reads it (`57.60 km`, `35.79 mi`); undefined when there is none. */
function distanceText(meters: number | null | undefined, units: Units): string | undefined {
  return typeof meters === 'number' && Number.isFinite(meters) ? formatDistance(meters, units) : undefined;
}

/** How values of a sport are shown to this user: speed or pace, metric or imperial (api/web/static/units.js). */
interface Shown {
  sport: string;
  units: Units;
}

function round(value: number, digits = 1): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

interface Channel {
  key: string;
  label: string;
  unit: string;
  convert?: (v: number) => number | null;
  digits?: number;
  /** The converted value's text, when not a number of `digits` (a pace: minutes and seconds). */
  text?: (v: number) => string;
}

/** The summary members, their labels and how a stored value (SI units) is shown to this user for this sport. */
function channelsFor({ sport, units }: Shown): Channel[] {
  const speed = speedDisplay(sport, units);
  return [
    { key: 'heart_rate', label: 'Heart rate', unit: 'bpm', digits: 0 },
    { key: 'power', label: 'Power', unit: 'W', digits: 0 },
    { key: 'cadence', label: 'Cadence', unit: 'rpm', digits: 0 },
    { key: 'speed', label: speed.label, unit: speed.unit, convert: speed.convert, ...(speed.reversed ? { text: speed.text } : {}) },
    { key: 'distance', label: 'Distance', unit: units === 'imperial' ? 'mi' : 'km', convert: (v) => distanceValue(v, units), digits: 2 },
    { key: 'altitude', label: 'Altitude', unit: 'm', digits: 0 },
    { key: 'temperature', label: 'Temperature', unit: '°C' },
    { key: 'core_temperature', label: 'Core temperature', unit: '°C', digits: 2 },
    { key: 'smo2', label: 'SmO₂', unit: '%' },
  ];
}
const STATS: [key: string, label: string][] = [
  ['mean', 'Mean'],
  ['min', 'Min'],
  ['max', 'Max'],
  ['start', 'Start'],
  ['end', 'End'],
  ['gain', 'Gain'],
  ['loss', 'Loss'],
  ['sum', 'Total'],
];

function statValue(channel: Channel, value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '';
  const v = channel.convert ? channel.convert(value) : value;
  if (v === null) return '';
  if (channel.text) return channel.text(v);
  return channel.digits === 0 ? String(Math.round(v)) : round(v, channel.digits ?? 1);
}

function summaryTable(summary: Record<string, unknown> | null, shown: Shown): Html {
  const channels = channelsFor(shown).filter((c) => statsOf(summary, c.key));
  if (!channels.length) return html`<p id="no-summary" class="muted">No summary statistics.</p>`;
  const stats = STATS.filter(([s]) => channels.some((c) => statsOf(summary, c.key)?.[s] !== undefined));
  return html`<div class="table-scroll"><table class="wide" id="summary">
<thead><tr><th>Channel</th>${stats.map(([, label]) => html`<th>${label}</th>`)}<th>Unit</th></tr></thead>
<tbody>${channels.map((c) => {
    const s = statsOf(summary, c.key)!;
    return html`<tr data-channel="${c.key}"><th scope="row">${c.label}</th>${stats.map(([k]) => html`<td data-stat="${k}">${statValue(c, s[k])}</td>`)}<td>${c.unit}</td></tr>`;
  })}</tbody>
</table></div>`;
}

/** Lap columns: what a lap most often is read for, each shown only when some lap has it. */
const LAP_COLUMNS: { channel: string; stat: string; label: string }[] = [
  { channel: 'heart_rate', stat: 'mean', label: 'Avg HR (bpm)' },
  { channel: 'heart_rate', stat: 'max', label: 'Max HR (bpm)' },
  { channel: 'power', stat: 'mean', label: 'Avg power (W)' },
  { channel: 'power', stat: 'max', label: 'Max power (W)' },
  { channel: 'speed', stat: 'mean', label: 'Avg speed' },
  { channel: 'cadence', stat: 'mean', label: 'Avg cadence (rpm)' },
  { channel: 'altitude', stat: 'gain', label: 'Ascent (m)' },
];

function lapsTable(activity: ActivityRow, shown: Shown): Html {
  const channels = channelsFor(shown);
  // A column's heading with the unit the user reads it in (`Avg speed (km/h)`, `Avg pace (min/km)`).
  const heading = (c: (typeof LAP_COLUMNS)[number]) => {
    if (c.channel !== 'speed') return c.label;
    const speed = channels.find((ch) => ch.key === 'speed')!;
    return `Avg ${speed.label.toLowerCase()} (${speed.unit})`;
  };
  const laps = activity.laps ?? [];
  if (!laps.length) return html`<p id="no-laps" class="muted">No laps.</p>`;
  const offset = activity.utc_offset_seconds;
  const hasDistance = laps.some((l) => statsOf(l, 'distance')?.sum !== undefined);
  // Timer and moving time of each lap: ingest version 2 on.
  const hasTimer = laps.some((l) => num(l.timer_seconds) !== undefined);
  const hasMoving = laps.some((l) => num(l.moving_seconds) !== undefined);
  const seconds = (v: unknown) => (num(v) === undefined ? '' : clockDuration(num(v)! * 1000));
  const columns = LAP_COLUMNS.filter((col) => laps.some((l) => statsOf(l, col.channel)?.[col.stat] !== undefined));
  return html`<div class="table-scroll"><table class="wide" id="laps">
<thead><tr><th>Lap</th><th>Start</th><th>Duration</th>${hasTimer ? html`<th>Timer</th>` : ''}${hasMoving ? html`<th>Moving</th>` : ''}${hasDistance ? html`<th>Distance</th>` : ''}${columns.map((c) => html`<th>${heading(c)}</th>`)}</tr></thead>
<tbody>${laps.map(
    (lap, i) =>
      html`<tr data-lap="${i + 1}"><td>${i + 1}</td><td>${localTime(new Date(lap.start), offset, { seconds: true, timeOnly: true })}</td><td>${clockDuration(lap.end - lap.start)}</td>${hasTimer ? html`<td>${seconds(lap.timer_seconds)}</td>` : ''}${hasMoving ? html`<td>${seconds(lap.moving_seconds)}</td>` : ''}${
        hasDistance ? html`<td>${distanceText(statsOf(lap, 'distance')?.sum as number | undefined, shown.units) ?? ''}</td>` : ''
      }${columns.map((c) => html`<td>${statValue(channels.find((ch) => ch.key === c.channel)!, statsOf(lap, c.channel)?.[c.stat])}</td>`)}</tr>`,
  )}</tbody>
</table></div>`;
}

// Charts -----------------------------------------------------------------------------------------

const CURVE_LABELS: Record<string, string> = { power: 'Power', speed: 'Speed', heart_rate: 'Heart rate' };

/** A select of the curve metrics the activity records (the first is chosen); nothing when it records none. */
function metricSelect(id: string, label: string, metrics: string[]): Html {
  return html`<label for="${id}">${label}</label>
<select id="${id}">${metrics.map((m) => html`<option value="${m}">${CURVE_LABELS[m] ?? m}</option>`)}</select>`;
}

/**
 * Where the page's script (static/activity.js) draws the activity from the public API: the time series
 * of every recorded channel, the route when positions were recorded, the mean-max curve (power, else
 * speed) and the accumulated work duration (power for cycling, else speed, else heart rate).
 */
function chartsSection(a: ActivityRow): Html {
  const has = (m: string) => a.metrics.includes(m);
  const meanMax = ['power', 'speed'].filter(has);
  const preferred = rootSport(a.sport) === 'cycling' ? ['power', 'speed', 'heart_rate'] : ['speed', 'power', 'heart_rate'];
  const awd = preferred.filter(has);
  const route = has('latitude') && has('longitude');
  return html`<section id="activity-charts" class="activity-charts" data-activity-id="${a.id}" data-metrics="${a.metrics.join(',')}" data-state="loading" aria-label="Recorded channels over time">
<p id="charts-status" class="muted" role="status">Loading the recorded channels…</p>
<div id="best-window" class="best-window" hidden><span id="best-window-text"></span> <button type="button" id="reset-zoom" class="small">Whole activity</button></div>
<div id="timeseries" class="timeseries"></div>
<p class="hint">Hover to read every channel at one instant; drag across a chart to zoom, double-click to see the whole activity.</p>
</section>
${loadSection(a)}
<div class="activity-panels">
${route ? html`<section class="panel" id="route-panel"><h2>Route</h2><p id="route-status" class="muted" hidden></p><div id="route" class="route"></div></section>` : ''}
${
  meanMax.length
    ? html`<section class="panel" id="mean-max-panel"><h2>Mean-max curve</h2>
<div class="panel-controls">${metricSelect('mean-max-metric', 'Metric', meanMax)}</div>
<p id="mean-max-status" class="muted" hidden></p><div id="mean-max-chart" class="curve-chart"></div>
<p class="hint">The best average over each duration. Click a point to see that effort in the charts above.</p></section>`
    : ''
}
${
  awd.length
    ? html`<section class="panel" id="awd-panel"><h2>Accumulated work duration</h2>
<div class="panel-controls">${metricSelect('awd-metric', 'Metric', awd)}</div>
<p id="awd-status" class="muted" hidden></p><div id="awd-chart" class="curve-chart"></div>
<p class="hint">Total time at or above each level.</p></section>`
    : ''
}
</div>`;
}

/**
 * Where static/activity-load.js shows the activity's training stress, time in zones and lowest W′
 * balance from the API (read again while they are being computed); the W′ balance is charted under
 * power in the time series above.
 */
function loadSection(a: ActivityRow): Html {
  return html`<section id="training-load" class="training-load" data-state="loading" aria-labelledby="training-load-heading">
<h2 id="training-load-heading">Training load</h2>
<p id="load-status" class="muted" role="status">Loading the training stress…</p>
<dl id="training-stress" class="training-stress" hidden></dl>
<div id="time-in-zones" class="time-in-zones"></div>
<p class="hint">From the thresholds that hold on the activity's day: <a href="/settings/thresholds">Settings → Thresholds</a>.${a.metrics.includes('power') ? ' With critical power and W′, the W′ balance is charted under power.' : ''}</p>
</section>`;
}

// Pages ------------------------------------------------------------------------------------------

function listPage(user: WebUser, activities: ActivityRow[], pageNo: number, hasOlder: boolean, message?: string): string {
  const pager =
    pageNo > 1 || hasOlder
      ? html`<nav class="pager" aria-label="Pages">
${pageNo > 1 ? html`<a href="${pageNo === 2 ? '/activities' : `/activities?page=${pageNo - 1}`}" rel="prev" id="newer">← Newer</a>` : ''}
<span class="muted">Page ${pageNo}</span>
${hasOlder ? html`<a href="/activities?page=${pageNo + 1}" rel="next" id="older">Older →</a>` : ''}
</nav>`
      : '';
  return page(
    { title: 'Activities', user: headerOf(user), styles: ['/static/activity.css'] },
    html`<h1>Activities</h1>
${notice(message)}
<p><a href="/upload" id="upload-link">Upload files</a> (FIT, CSV, GPX or TCX) or import your history (a zip).</p>
${
  activities.length
    ? html`<div class="table-scroll"><table class="wide" id="activities">
<thead><tr><th>Start</th><th>Name</th><th>Sport</th><th>Duration</th><th>Distance</th><th>Metrics</th></tr></thead>
<tbody>${activities.map(
        (a) => html`<tr data-activity-id="${a.id}">
<td><a href="/activities/${a.id}">${localTime(a.start_time, a.utc_offset_seconds)}</a></td>
<td class="activity-name">${a.name ?? ''}</td>
<td data-sport="${a.sport}">${sportLabel(a.sport)}</td>
<td>${clockDuration(a.end_time.getTime() - a.start_time.getTime())}</td>
<td>${distanceText(a.distance, user.units) ?? ''}</td>
<td>${a.metrics.map(metricLabel).join(', ')}</td>
</tr>`,
      )}</tbody>
</table></div>`
    : pageNo > 1
      ? html`<p id="no-activities">No activities on this page. <a href="/activities">Back to the newest</a>.</p>`
      : html`<p id="no-activities">You have no activities yet. <a href="/upload">Upload FIT, CSV, GPX or TCX files</a> here or with the <a href="/docs">API</a> (<code>POST /api/v1/activities/upload</code>), or connect an application that sends them.</p>`
}
${pager}`,
  );
}

/** The tests whose window overlaps the activity, linked to their pages. */
function testsList(tests: TestRow[]): Html {
  if (!tests.length) return html``;
  return html`<h2>Tests</h2>
<ul id="activity-tests" class="test-links">${tests.map(
    (t) => html`<li data-test-id="${t.id}"><a href="/tests/${t.id}">${testName(t)}</a></li>`,
  )}</ul>`;
}

function detailsPage(user: WebUser, a: ActivityRow, opts: { confirmError?: string; tests?: TestRow[] } = {}): string {
  const offset = a.utc_offset_seconds;
  const shown: Shown = { sport: a.sport, units: user.units };
  const distance = distanceText(a.distance, user.units);
  const timer = num(a.timer_seconds);
  const moving = num(a.moving_seconds);
  const np = num(statsOf(a.summary, 'power')?.normalized);
  const work = num(statsOf(a.summary, 'power')?.work);
  return page(
    {
      title: `${a.name ?? sportLabel(a.sport)} ${formatLocal(a.start_time, offset).slice(0, 10)}`,
      user: headerOf(user),
      charts: true,
      styles: ['/static/activity.css'],
      scripts: ['/static/activity.js'],
    },
    html`<p><a href="/activities">← All activities</a></p>
<h1 id="activity-title">${a.name ?? html`${sportLabel(a.sport)}, ${localTime(a.start_time, offset)}`}</h1>
${a.description ? html`<p id="activity-description" class="activity-description">${a.description}</p>` : ''}
<dl id="activity" data-activity-id="${a.id}">
  <dt>Sport</dt><dd id="activity-sport"><code>${a.sport}</code></dd>
  <dt>Start</dt><dd id="activity-start">${localTime(a.start_time, offset, { seconds: true })} <span class="muted">(${utcOffset(offset)})</span></dd>
  <dt>End</dt><dd id="activity-end">${localTime(a.end_time, offset, { seconds: true })}</dd>
  <dt>Elapsed</dt><dd id="activity-duration">${clockDuration(a.end_time.getTime() - a.start_time.getTime())}</dd>
  ${timer !== undefined ? html`<dt>Timer</dt><dd id="activity-timer">${clockDuration(timer * 1000)}</dd>` : ''}
  ${moving !== undefined ? html`<dt>Moving</dt><dd id="activity-moving">${clockDuration(moving * 1000)}</dd>` : ''}
  ${distance ? html`<dt>Distance</dt><dd id="activity-distance">${distance}</dd>` : ''}
  ${np !== undefined ? html`<dt>Normalized power</dt><dd id="activity-np">${grouped(np)} W</dd>` : ''}
  ${work !== undefined ? html`<dt>Work</dt><dd id="activity-work">${grouped(work)} kJ</dd>` : ''}
  <dt>Devices</dt><dd id="activity-devices">${a.devices.length ? a.devices.join(', ') : html`<span class="muted">none recorded</span>`}</dd>
  <dt>Metrics</dt><dd id="activity-metrics">${a.metrics.length ? a.metrics.map(metricLabel).join(', ') : html`<span class="muted">none</span>`}</dd>
  ${a.tags.length ? html`<dt>Tags</dt><dd id="activity-tags">${a.tags.map((t) => html`<code>${t}</code> `)}</dd>` : ''}
  <dt>Id</dt><dd><code id="activity-id">${a.id}</code></dd>
</dl>
<p><a href="/api/v1/activities/${a.id}/download" id="download" download>Download original file</a></p>
${testsList(opts.tests ?? [])}
${chartsSection(a)}
<h2>Summary</h2>
${summaryTable(a.summary, shown)}
${dataChecks(a, user.units)}
<h2>Laps</h2>
${lapsTable(a, shown)}
<h2>Delete activity</h2>
<p>Deleting removes the activity and its samples. When it is the last activity of its file, the original file is deleted too.</p>
<form method="post" action="/activities/${a.id}/delete" class="stack" id="delete-form">
  <div class="check">
    <input type="checkbox" id="confirm" name="confirm" value="yes" required${opts.confirmError ? html` aria-invalid="true" aria-describedby="confirm-error"` : ''}>
    <label for="confirm">I understand this cannot be undone</label>
  </div>
  ${opts.confirmError ? html`<p class="field-error" id="confirm-error">${opts.confirmError}</p>` : ''}
  <button type="submit" class="danger" id="delete-activity">Delete activity</button>
</form>`,
  );
}

// Handlers ---------------------------------------------------------------------------------------

/** `?page=N` as a page number from 1; anything else is page 1. */

const LIST_NOTICES: Record<string, string> = { deleted: 'Activity deleted.' };

export async function showActivities(ctx: Ctx) {
  const user = await requireWebUser(ctx, ctx.url);
  if (!user) return;
  const pageNo = pageNumber(ctx.query.page);
  const rows = await listActivities(
    ctx.deps.db,
    subjectId(user),
    {},
    { limit: ACTIVITIES_PER_PAGE + 1, offset: (pageNo - 1) * ACTIVITIES_PER_PAGE },
  );
  const message = Object.keys(LIST_NOTICES).find((k) => ctx.query[k] !== undefined);
  sendHtml(
    ctx,
    200,
    listPage(user, rows.slice(0, ACTIVITIES_PER_PAGE), pageNo, rows.length > ACTIVITIES_PER_PAGE, message && LIST_NOTICES[message]),
  );
}

/** The signed-in user's activity named in the path, or undefined after answering (sign-in redirect or 404). */
async function ownActivity(ctx: Ctx, opts: { post: boolean }): Promise<{ user: WebUser; activity: ActivityRow } | undefined> {
  if (opts.post) assertSameOrigin(ctx);
  const id = ctx.params.id ?? '';
  const user = await requireWebUser(ctx, opts.post ? `/activities/${encodeURIComponent(id)}` : ctx.path);
  if (!user) return undefined;
  const activity = isUuid(id) ? await findActivity(ctx.deps.db, subjectId(user), id) : undefined;
  if (!activity) {
    notFound(ctx, 'Activity not found.', user);
    return undefined;
  }
  return { user, activity };
}

export async function showActivity(ctx: Ctx) {
  const found = await ownActivity(ctx, { post: false });
  if (!found) return;
  const tests = await testsOverlapping(ctx.deps.db, subjectId(found.user), found.activity);
  sendHtml(ctx, 200, detailsPage(found.user, found.activity, { tests }));
}

export async function deleteActivityFromForm(ctx: Ctx) {
  const found = await ownActivity(ctx, { post: true });
  if (!found || !mayChangeData(ctx, found.user)) return;
  if (!formBody(ctx).confirm) {
    sendHtml(
      ctx,
      422,
      detailsPage(found.user, found.activity, { confirmError: 'Tick the box to confirm: a deleted activity cannot be restored.' }),
    );
    return;
  }
  if (!(await asActor(found.user, () => removeActivity(ctx.deps, subjectId(found.user), found.activity.id))))
    return notFound(ctx, 'Activity not found.', found.user);
  ctx.status = 303;
  ctx.redirect('/activities?deleted=1');
}
