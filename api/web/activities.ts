import type { Ctx } from '../context.ts';
import type { ActivityRow } from '../../db/database.ts';
import { findActivity, listActivities } from '../../db/activities.ts';
import { isUuid } from '../../lib/ids.ts';
import { rootSport } from '../../lib/sports.ts';
import { formatInstant, formatLocal } from '../../lib/time.ts';
import { PLAUSIBLE_RANGES } from '../../engine/ingest/plausible.ts';
import { INGEST_RULES_VERSION } from '../../engine/ingest/rules.ts';
import { removeActivity } from '../routes/activities/activity.ts';
import { assertSameOrigin } from '../middleware/origin-check.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';
import { formBody } from './forms.ts';
import { displayName, notFound, notice, pageNumber, requireWebUser, sendHtml, utcOffset, type WebUser } from './web-common.ts';

/** The signed-in user's activities: a paged list, one activity's details, and deleting one. */

export const ACTIVITIES_PER_PAGE = 50;

// Display ----------------------------------------------------------------------------------------

/** `2026-05-18 17:32` on the athlete's clock at the time, in a <time> element carrying the instant. */
function localTime(date: Date, offsetSeconds: number, opts: { seconds?: boolean; timeOnly?: boolean } = {}): Html {
  const local = formatLocal(date, offsetSeconds).replace('T', ' ');
  const shown = opts.timeOnly ? local.slice(11, opts.seconds ? 19 : 16) : local.slice(0, opts.seconds ? 19 : 16);
  return html`<time datetime="${formatInstant(date)}">${shown}</time>`;
}

/** `1:02:03`, or `2:03` under an hour. */
export function clockDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** `cycling.road+indoor` as `Cycling › road (indoor)`. */
export function sportLabel(sport: string): string {
  const [path = '', ...modifiers] = sport.split('+');
  const parts = path.split('.').map((p) => p.replace(/_/g, ' '));
  const head = parts.map((p, i) => (i === 0 ? p.charAt(0).toUpperCase() + p.slice(1) : p)).join(' › ');
  return modifiers.length ? `${head} (${modifiers.map((m) => m.replace(/_/g, ' ')).join(', ')})` : head;
}

function km(meters: number | null | undefined): string | undefined {
  return typeof meters === 'number' && Number.isFinite(meters) ? `${(meters / 1000).toFixed(2)} km` : undefined;
}

function round(value: number, digits = 1): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(digits);
}

const METRIC_LABELS: Record<string, string> = {
  heart_rate: 'heart rate',
  core_temperature: 'core temperature',
  smo2: 'SmO₂',
};
const metricLabel = (m: string) => METRIC_LABELS[m] ?? m.replace(/_/g, ' ');

/** The summary members, their labels and how a stored value (SI units) is shown. */
const CHANNELS: { key: string; label: string; unit: string; convert?: (v: number) => number; digits?: number }[] = [
  { key: 'heart_rate', label: 'Heart rate', unit: 'bpm', digits: 0 },
  { key: 'power', label: 'Power', unit: 'W', digits: 0 },
  { key: 'cadence', label: 'Cadence', unit: 'rpm', digits: 0 },
  { key: 'speed', label: 'Speed', unit: 'km/h', convert: (v) => v * 3.6 },
  { key: 'distance', label: 'Distance', unit: 'km', convert: (v) => v / 1000, digits: 2 },
  { key: 'altitude', label: 'Altitude', unit: 'm', digits: 0 },
  { key: 'temperature', label: 'Temperature', unit: '°C' },
  { key: 'core_temperature', label: 'Core temperature', unit: '°C', digits: 2 },
  { key: 'smo2', label: 'SmO₂', unit: '%' },
];
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

type Stats = Record<string, unknown>;
const statsOf = (owner: Record<string, unknown> | null | undefined, key: string): Stats | undefined => {
  const v = owner?.[key];
  return v && typeof v === 'object' ? (v as Stats) : undefined;
};

function statValue(channel: (typeof CHANNELS)[number], value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '';
  const v = channel.convert ? channel.convert(value) : value;
  return channel.digits === 0 ? String(Math.round(v)) : round(v, channel.digits ?? 1);
}

function summaryTable(summary: Record<string, unknown> | null): Html {
  const channels = CHANNELS.filter((c) => statsOf(summary, c.key));
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
  { channel: 'speed', stat: 'mean', label: 'Avg speed (km/h)' },
  { channel: 'cadence', stat: 'mean', label: 'Avg cadence (rpm)' },
  { channel: 'altitude', stat: 'gain', label: 'Ascent (m)' },
];

function lapsTable(activity: ActivityRow): Html {
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
<thead><tr><th>Lap</th><th>Start</th><th>Duration</th>${hasTimer ? html`<th>Timer</th>` : ''}${hasMoving ? html`<th>Moving</th>` : ''}${hasDistance ? html`<th>Distance</th>` : ''}${columns.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
<tbody>${laps.map(
    (lap, i) => html`<tr data-lap="${i + 1}"><td>${i + 1}</td><td>${localTime(new Date(lap.start), offset, { seconds: true, timeOnly: true })}</td><td>${clockDuration(lap.end - lap.start)}</td>${hasTimer ? html`<td>${seconds(lap.timer_seconds)}</td>` : ''}${hasMoving ? html`<td>${seconds(lap.moving_seconds)}</td>` : ''}${
      hasDistance ? html`<td>${km(statsOf(lap, 'distance')?.sum as number | undefined) ?? ''}</td>` : ''
    }${columns.map((c) => html`<td>${statValue(CHANNELS.find((ch) => ch.key === c.channel)!, statsOf(lap, c.channel)?.[c.stat])}</td>`)}</tr>`,
  )}</tbody>
</table></div>`;
}

// Data checks ------------------------------------------------------------------------------------

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const grouped = (v: number, digits = 0) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const plural = (n: number, one: string, many: string) => `${grouped(n)} ${n === 1 ? one : many}`;

/** Why records of the file were left out (api/resources/activities-traces.ts DroppedRecords), one line per reason. */
const DROPPED_REASONS: Record<string, { one: string; many: string }> = {
  duplicate_timestamp: {
    one: "its timestamp repeats another record's (the last one in the file is kept)",
    many: "their timestamps repeat another record's (the last one in the file is kept)",
  },
  outside_session: {
    one: 'its timestamp lies outside the session (a device clock that jumped, or a record written after the end)',
    many: 'their timestamps lie outside the session (a device clock that jumped, or records written after the end)',
  },
};

/** A channel's plausible range (engine/ingest/plausible.ts), as people read it: `0 to 3,000 W`, `0 to 360 km/h`, `at least 0 m`. */
function plausibleRange(channel: string): string | undefined {
  const range = (PLAUSIBLE_RANGES as Record<string, { min: number; max: number; unit: string } | undefined>)[channel];
  if (!range) return undefined;
  const [min, max, unit] = channel === 'speed' ? [range.min * 3.6, range.max * 3.6, 'km/h'] : [range.min, range.max, range.unit];
  const withUnit = (text: string) => (unit === '°' || unit === '%' ? `${text}${unit}` : `${text} ${unit}`);
  const value = (v: number) => `${v < 0 ? '−' : ''}${grouped(Math.abs(v))}`;
  return Number.isFinite(max) ? withUnit(`${value(min)} to ${value(max)}`) : `at least ${withUnit(value(min))}`;
}

/** The file's records left out and the samples stored as missing, each with its reason; a line saying so when there are none. */
function recordChecks(a: ActivityRow): Html {
  const dropped = a.dropped_records;
  const implausible = a.implausible_samples;
  if (!dropped && !implausible) return html``;
  const lines: Html[] = [];
  // In a fixed order (the reasons', the channels'): jsonb keeps its keys in an order of its own.
  const ordered = (counts: Record<string, number>, known: string[]) =>
    [...known.filter((k) => k in counts), ...Object.keys(counts).filter((k) => !known.includes(k))].map((k) => [k, counts[k]] as const);
  for (const [reason, value] of ordered(dropped ?? {}, Object.keys(DROPPED_REASONS))) {
    const count = num(value);
    if (!count) continue;
    const why = DROPPED_REASONS[reason];
    const text = why ? `${plural(count, 'record', 'records')} left out: ${count === 1 ? why.one : why.many}` : `${plural(count, 'record', 'records')} left out (${reason.replace(/_/g, ' ')})`;
    lines.push(html`<li data-dropped="${reason}">${text}</li>`);
  }
  for (const [channel, value] of ordered(implausible ?? {}, Object.keys(PLAUSIBLE_RANGES))) {
    const count = num(value);
    if (!count) continue;
    const range = plausibleRange(channel);
    const what = `${plural(count, `${metricLabel(channel)} sample`, `${metricLabel(channel)} samples`)} stored as missing`;
    lines.push(html`<li data-implausible="${channel}">${range ? `${what}: outside the plausible ${range}, so sensor glitches rather than effort` : `${what}: implausible values`}</li>`);
  }
  if (lines.length) return html`<h3 id="record-checks-heading">Left out of the file</h3><ul id="record-checks" class="record-checks" aria-labelledby="record-checks-heading">${lines}</ul>`;
  const clean = [dropped ? 'every record of the file was used' : '', implausible ? 'every sample was within its plausible range' : ''].filter(Boolean).join(', and ');
  return html`<p id="record-checks-clean" class="muted">${clean.charAt(0).toUpperCase()}${clean.slice(1)}.</p>`;
}

/** Our value beside the device's (FIT session fields, api/resources/activities-traces.ts DeviceSummary): how each is read and shown, and why they may differ. */
const DEVICE_COMPARISONS: { key: string; label: string; device: string; ours: (a: ActivityRow) => number | undefined; show: (v: number) => string; why: string }[] = [
  {
    key: 'timer',
    label: 'Timer time',
    device: 'total_timer_time',
    ours: (a) => num(a.timer_seconds),
    show: (s) => clockDuration(s * 1000),
    why: "We add up the spans between the file's timer start and stop events (or leave out gaps over 90 s); the device keeps its own count, which may treat auto-pause or a paused start differently.",
  },
  {
    key: 'elapsed',
    label: 'Elapsed time',
    device: 'total_elapsed_time',
    ours: (a) => (a.end_time.getTime() - a.start_time.getTime()) / 1000,
    show: (s) => clockDuration(s * 1000),
    why: "Ours is the session's start to its end as stored, after records outside the session were left out; the device's own count may start or stop at another instant.",
  },
  {
    key: 'distance',
    label: 'Distance',
    device: 'total_distance',
    ours: (a) => num(a.distance),
    show: (m) => `${grouped(m / 1000, 2)} km`,
    why: "Ours is the recorded distance channel at the end (or speed × time without one); the device may total another sensor's distance or correct it afterwards.",
  },
  {
    key: 'avg_power',
    label: 'Average power',
    device: 'avg_power',
    ours: (a) => num(statsOf(a.summary, 'power')?.mean),
    show: (w) => `${grouped(w)} W`,
    why: 'Ours averages every second the timer ran, zeros (coasting) included; devices may leave zeros out or average their records instead of seconds.',
  },
  {
    key: 'np',
    label: 'Normalized power',
    device: 'normalized_power',
    ours: (a) => num(statsOf(a.summary, 'power')?.normalized),
    show: (w) => `${grouped(w)} W`,
    why: 'Ours is the 30 s rolling mean over the seconds the timer ran, on a 1 Hz grid with short gaps filled; devices differ in how they treat pauses, gaps and zeros.',
  },
  {
    key: 'avg_hr',
    label: 'Average heart rate',
    device: 'avg_heart_rate',
    ours: (a) => num(statsOf(a.summary, 'heart_rate')?.mean),
    show: (b) => `${grouped(b)} bpm`,
    why: 'Ours averages the recorded seconds on a 1 Hz grid; the device may average its records, or count only while its timer ran.',
  },
  {
    key: 'avg_cadence',
    label: 'Average cadence',
    device: 'avg_cadence',
    ours: (a) => num(statsOf(a.summary, 'cadence')?.mean),
    show: (r) => `${grouped(r)} rpm`,
    why: 'Ours leaves out the seconds with cadence 0 (coasting); some devices count them, or average their records instead of seconds.',
  },
  {
    key: 'avg_speed',
    label: 'Average speed',
    device: 'avg_speed',
    ours: (a) => num(statsOf(a.summary, 'speed')?.mean),
    show: (v) => `${grouped(v * 3.6, 1)} km/h`,
    why: "Ours is distance / moving time; the device's is distance / timer time, so stops while the timer ran lower it.",
  },
  {
    key: 'ascent',
    label: 'Ascent',
    device: 'total_ascent',
    ours: (a) => num(statsOf(a.summary, 'altitude')?.gain),
    show: (m) => `${grouped(m)} m`,
    why: "Ours is the device's total when the file has one, else the climbs of more than 3 m in the recorded altitude; the device filters its barometer or GPS altitude its own way.",
  },
];

/** Whether two values differ by more than 1 % of the device's. */
const differs = (device: number, ours: number) => Math.abs(ours - device) > 0.01 * Math.abs(device);

/** The device's own session values beside ours where they differ by more than 1 %; one line when all agree. */
function deviceComparison(a: ActivityRow): Html {
  const device = a.device_summary;
  if (!device) return html``;
  const pairs = DEVICE_COMPARISONS.map((c) => ({ c, device: num(device[c.device]), ours: c.ours(a) })).filter(
    (p): p is { c: (typeof DEVICE_COMPARISONS)[number]; device: number; ours: number } => p.device !== undefined && p.ours !== undefined,
  );
  if (!pairs.length) return html``;
  const differing = pairs.filter((p) => differs(p.device, p.ours));
  if (!differing.length)
    return html`<p id="device-agrees" class="device-agrees">Agrees with the device's own summary (within 1 %: ${pairs.map((p) => p.c.label.toLowerCase()).join(', ')}).</p>`;
  const agreeing = pairs.filter((p) => !differs(p.device, p.ours));
  const percent = (p: { device: number; ours: number }) => {
    if (p.device === 0) return '';
    const d = ((p.ours - p.device) / Math.abs(p.device)) * 100;
    return `${d > 0 ? '+' : '−'}${grouped(Math.abs(d), 1)} %`;
  };
  return html`<h3 id="device-heading">Beside the device's own summary</h3>
<div class="table-scroll"><table class="wide device-comparison" id="device-comparison" aria-labelledby="device-heading">
<thead><tr><th></th><th>Device says</th><th>We compute</th><th>Why it may differ</th></tr></thead>
<tbody>${differing.map(
    (p) => html`<tr data-compare="${p.c.key}"><th scope="row">${p.c.label}</th><td data-device>${p.c.show(p.device)}</td><td data-ours>${p.c.show(p.ours)} <span class="muted">(${percent(p)})</span></td><td class="why">${p.c.why}</td></tr>`,
  )}</tbody>
</table></div>
${agreeing.length ? html`<p class="muted" id="device-agreeing">Within 1 % of the device: ${agreeing.map((p) => p.c.label.toLowerCase()).join(', ')}.</p>` : ''}`;
}

/** Which rules made the numbers, when older than the current ones; the device comparison; records and samples left out. */
function dataChecks(a: ActivityRow): Html {
  const version = a.ingest_version;
  const note =
    version < INGEST_RULES_VERSION
      ? html`<p id="ingest-version" class="ingest-note">Made by version ${version} of the ingest rules (current: ${INGEST_RULES_VERSION}): ${
          version === 1 ? "timer and moving time, normalized power, the device's own summary and the records left out were not kept then. " : ''
        }Reprocessing (<code>npm run cli -- reprocess</code>) re-derives the activity from its original file with the current rules.</p>`
      : '';
  const body = [note, deviceComparison(a), recordChecks(a)].filter((h) => h && String(h));
  if (!body.length) return html``;
  return html`<section id="data-checks" class="data-checks" aria-labelledby="data-checks-heading"><h2 id="data-checks-heading">Data checks</h2>
${body}
</section>`;
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
<div class="activity-panels">
${route ? html`<section class="panel" id="route-panel"><h2>Route</h2><p id="route-status" class="muted" hidden></p><div id="route" class="route"></div></section>` : ''}
${meanMax.length
  ? html`<section class="panel" id="mean-max-panel"><h2>Mean-max curve</h2>
<div class="panel-controls">${metricSelect('mean-max-metric', 'Metric', meanMax)}</div>
<p id="mean-max-status" class="muted" hidden></p><div id="mean-max-chart" class="curve-chart"></div>
<p class="hint">The best average over each duration. Click a point to see that effort in the charts above.</p></section>`
  : ''}
${awd.length
  ? html`<section class="panel" id="awd-panel"><h2>Accumulated work duration</h2>
<div class="panel-controls">${metricSelect('awd-metric', 'Metric', awd)}</div>
<p id="awd-status" class="muted" hidden></p><div id="awd-chart" class="curve-chart"></div>
<p class="hint">Total time at or above each level.</p></section>`
  : ''}
</div>`;
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
    { title: 'Activities', user: { name: displayName(user) }, styles: ['/static/activity.css'] },
    html`<h1>Activities</h1>
${notice(message)}
<p><a href="/upload" id="upload-link">Upload files</a> (FIT or CSV) or import your history (a zip).</p>
${activities.length
  ? html`<div class="table-scroll"><table class="wide" id="activities">
<thead><tr><th>Start</th><th>Sport</th><th>Duration</th><th>Distance</th><th>Metrics</th></tr></thead>
<tbody>${activities.map(
      (a) => html`<tr data-activity-id="${a.id}">
<td><a href="/activities/${a.id}">${localTime(a.start_time, a.utc_offset_seconds)}</a></td>
<td data-sport="${a.sport}">${sportLabel(a.sport)}</td>
<td>${clockDuration(a.end_time.getTime() - a.start_time.getTime())}</td>
<td>${km(a.distance) ?? ''}</td>
<td>${a.metrics.map(metricLabel).join(', ')}</td>
</tr>`,
    )}</tbody>
</table></div>`
  : pageNo > 1
    ? html`<p id="no-activities">No activities on this page. <a href="/activities">Back to the newest</a>.</p>`
    : html`<p id="no-activities">You have no activities yet. <a href="/upload">Upload FIT or CSV files</a> here or with the <a href="/docs">API</a> (<code>POST /api/v1/activities/upload</code>), or connect an application that sends them.</p>`}
${pager}`,
  );
}

function detailsPage(user: WebUser, a: ActivityRow, opts: { confirmError?: string } = {}): string {
  const offset = a.utc_offset_seconds;
  const distance = km(a.distance);
  const timer = num(a.timer_seconds);
  const moving = num(a.moving_seconds);
  const np = num(statsOf(a.summary, 'power')?.normalized);
  const work = num(statsOf(a.summary, 'power')?.work);
  return page(
    {
      title: `${sportLabel(a.sport)} ${formatLocal(a.start_time, offset).slice(0, 10)}`,
      user: { name: displayName(user) },
      charts: true,
      styles: ['/static/activity.css'],
      scripts: ['/static/activity.js'],
    },
    html`<p><a href="/activities">← All activities</a></p>
<h1 id="activity-title">${sportLabel(a.sport)}, ${localTime(a.start_time, offset)}</h1>
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
${chartsSection(a)}
<h2>Summary</h2>
${summaryTable(a.summary)}
${dataChecks(a)}
<h2>Laps</h2>
${lapsTable(a)}
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
  const rows = await listActivities(ctx.deps.db, user.id, {}, { limit: ACTIVITIES_PER_PAGE + 1, offset: (pageNo - 1) * ACTIVITIES_PER_PAGE });
  const message = Object.keys(LIST_NOTICES).find((k) => ctx.query[k] !== undefined);
  sendHtml(ctx, 200, listPage(user, rows.slice(0, ACTIVITIES_PER_PAGE), pageNo, rows.length > ACTIVITIES_PER_PAGE, message && LIST_NOTICES[message]));
}

/** The signed-in user's activity named in the path, or undefined after answering (sign-in redirect or 404). */
async function ownActivity(ctx: Ctx, opts: { post: boolean }): Promise<{ user: WebUser; activity: ActivityRow } | undefined> {
  if (opts.post) assertSameOrigin(ctx);
  const id = ctx.params.id ?? '';
  const user = await requireWebUser(ctx, opts.post ? `/activities/${encodeURIComponent(id)}` : ctx.path);
  if (!user) return undefined;
  const activity = isUuid(id) ? await findActivity(ctx.deps.db, user.id, id) : undefined;
  if (!activity) {
    notFound(ctx, 'Activity not found.', user);
    return undefined;
  }
  return { user, activity };
}

export async function showActivity(ctx: Ctx) {
  const found = await ownActivity(ctx, { post: false });
  if (!found) return;
  sendHtml(ctx, 200, detailsPage(found.user, found.activity));
}

export async function deleteActivityFromForm(ctx: Ctx) {
  const found = await ownActivity(ctx, { post: true });
  if (!found) return;
  if (!formBody(ctx).confirm) {
    sendHtml(ctx, 422, detailsPage(found.user, found.activity, { confirmError: 'Tick the box to confirm: a deleted activity cannot be restored.' }));
    return;
  }
  if (!(await removeActivity(ctx.deps, found.user.id, found.activity.id))) return notFound(ctx, 'Activity not found.', found.user);
  ctx.status = 303;
  ctx.redirect('/activities?deleted=1');
}
