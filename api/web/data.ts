import { recomputeLoad } from '../services/training-load/recompute.ts';
import type { Ctx } from '../http/context.ts';
import type { DailyRow, Db, TestRow, TraceRow } from '../../db/database.ts';
import type { ActivitySummaryRow } from '../../db/activities.ts';
import { activitiesContaining, deleteTrace, listTraces, type ContainingActivity } from '../../db/traces.ts';
import { deleteDaily, listDailies } from '../../db/dailies.ts';
import { DAILY_MEASURES, EARLIEST_DAY, type DailyMeasure } from '../services/dailies/model.ts';
import { isUuid } from '../../lib/ids.ts';
import { formatInstant, formatLocal, parseDay } from '../../lib/time.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html, type Html } from './html.ts';
import { page } from './layout.ts';
import { formBody } from './forms.ts';
import { sportLabel, testName } from './activities.ts';
import { testsOfTraces, type TestMatch } from '../../db/tests.ts';
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
import { formatSpeed, type Units } from './static/units.js';

/**
 * The signed-in user's traces and daily measures, as applications wrote them through the API, so a
 * person can check them (with each application's metadata) and delete what is wrong.
 */

export const TRACES_PER_PAGE = 50;
export const DAILIES_PER_PAGE = 60;
interface Pages {
  traces: number;
  dailies: number;
}

/** `/data` with the two page numbers (page 1 left out), `extra` query members and a fragment. */
function dataUrl(pages: Pages, opts: { extra?: Record<string, string>; hash?: string } = {}): string {
  const q = new URLSearchParams();
  if (pages.traces > 1) q.set('traces_page', String(pages.traces));
  if (pages.dailies > 1) q.set('dailies_page', String(pages.dailies));
  for (const [k, v] of Object.entries(opts.extra ?? {})) q.set(k, v);
  const query = q.toString();
  return `/data${query ? `?${query}` : ''}${opts.hash ? `#${opts.hash}` : ''}`;
}

// Display ----------------------------------------------------------------------------------------

/** `2026-05-18 17:32:10` on the trace's own clock, in a <time> carrying the instant, then `UTC+02:00`. */
function traceTime(date: Date, offsetSeconds: number): Html {
  const local = formatLocal(date, offsetSeconds).replace('T', ' ').slice(0, 19);
  return html`<time datetime="${formatInstant(date)}">${local}</time> <span class="muted">${utcOffset(offsetSeconds)}</span>`;
}

/** The measured values of a trace, in this order, with their units. */
const TRACE_VALUES: { key: 'lactate' | 'power' | 'speed' | 'heart_rate' | 'vo2' | 'rpe'; label: string; unit?: string }[] = [
  { key: 'lactate', label: 'Lactate', unit: 'mmol/L' },
  { key: 'power', label: 'Power', unit: 'W' },
  { key: 'speed', label: 'Speed', unit: 'm/s' },
  { key: 'heart_rate', label: 'Heart rate', unit: 'bpm' },
  { key: 'vo2', label: 'VO₂', unit: 'mL/min/kg' },
  { key: 'rpe', label: 'RPE' },
];

type TraceTest = { test: TestRow; match: TestMatch };

const none = html`<span class="muted">—</span>`;

interface AppMetadata {
  application_id: string;
  name: string;
  data: Record<string, unknown>;
}

/** Items one per line, or a dash when there are none. */
function lines(items: (Html | undefined)[]): Html {
  const present = items.filter((i): i is Html => i !== undefined);
  return present.length ? html`${present.map((item, i) => html`${i ? html`<br>` : ''}${item}`)}` : none;
}

/** The trace's test, linked to its page (by its title or date; `data-match`: by test id or by time); an id naming no stored test as it is. */
function testLink(t: TraceRow, test: TraceTest | undefined): Html | undefined {
  if (test)
    return html`<span class="trace-test" data-match="${test.match}">Test <a href="/tests/${test.test.id}">${testName(test.test)}</a></span>`;
  return t.test_id === null ? undefined : html`<span class="trace-test">Test <code>${t.test_id}</code></span>`;
}

function traceRow(
  t: TraceRow,
  activity: ActivitySummaryRow | undefined,
  test: TraceTest | undefined,
  metadata: AppMetadata[],
  pages: Pages,
  units: Units,
): Html {
  const local = formatLocal(t.time, t.utc_offset_seconds).replace('T', ' ').slice(0, 19);
  return html`<tr data-trace-id="${t.id}">
<td class="trace-time">${traceTime(t.time, t.utc_offset_seconds)}</td>
<td class="trace-sport">${t.sport ? html`<span data-sport="${t.sport}">${sportLabel(t.sport)}</span>` : none}</td>
<td class="trace-values">${lines(
    TRACE_VALUES.map((v) =>
      t[v.key] === null
        ? undefined
        : v.key === 'speed'
          ? html`<span data-value="speed">Speed ${formatSpeed(t.speed, t.sport, units)}</span>`
          : html`<span data-value="${v.key}">${v.label} ${String(t[v.key])}${v.unit ? ` ${v.unit}` : ''}</span>`,
    ),
  )}</td>
<td class="trace-notes">${lines([
    t.notes === null ? undefined : html`<span class="trace-note">${t.notes}</span>`,
    t.tags.length
      ? html`<span class="trace-tags">Tags: ${t.tags.map((tag, i) => html`${i ? ' ' : ''}<code>${tag}</code>`)}</span>`
      : undefined,
    testLink(t, test),
  ])}</td>
<td class="trace-activity">${
    activity
      ? html`<a href="/activities/${activity.id}">${sportLabel(activity.sport)}, ${formatLocal(activity.start_time, activity.utc_offset_seconds).replace('T', ' ').slice(0, 16)}</a>`
      : none
  }</td>
<td class="trace-apps">${lines(
    metadata.map(
      (m) =>
        html`<span class="app-metadata" data-application-id="${m.application_id}"><strong class="app-name">${m.name}</strong>: <code>${JSON.stringify(m.data)}</code></span>`,
    ),
  )}</td>
<td>${deleteForm(`/data/traces/${t.id}/delete`, pages, `delete-trace-${t.id}`, `Delete the trace of ${local}`)}</td>
</tr>`;
}

function dailyRow(d: DailyRow, pages: Pages): Html {
  const unit = DAILY_MEASURES[d.measure as DailyMeasure]?.unit;
  return html`<tr data-measure="${d.measure}" data-date="${d.day}">
<td>${d.day}</td>
<td><code>${d.measure}</code></td>
<td class="daily-value">${String(d.value)}${unit ? ` ${unit}` : ''}</td>
<td><code>${d.source}</code></td>
<td>${deleteForm(`/data/dailies/${encodeURIComponent(d.measure)}/${d.day}/delete`, pages, `delete-daily-${d.measure}-${d.day}`, `Delete ${d.measure} of ${d.day}`)}</td>
</tr>`;
}

/** A one-button form; the page numbers ride along so the redirect comes back to the same pages. */
function deleteForm(action: string, pages: Pages, id: string, label: string): Html {
  return html`<form method="post" action="${action}" class="inline">
<input type="hidden" name="traces_page" value="${pages.traces}"><input type="hidden" name="dailies_page" value="${pages.dailies}">
<button type="submit" class="danger small" id="${id}" aria-label="${label}">Delete</button>
</form>`;
}

/** Older/newer links of one list; the other list's page is kept. */
function pager(kind: 'traces' | 'dailies', pages: Pages, hasOlder: boolean): Html {
  const pageNo = pages[kind];
  if (pageNo === 1 && !hasOlder) return html``;
  const at = (n: number) => dataUrl({ ...pages, [kind]: n }, { hash: kind });
  return html`<nav class="pager" aria-label="${kind === 'traces' ? 'Trace pages' : 'Daily measure pages'}">
${pageNo > 1 ? html`<a href="${at(pageNo - 1)}" rel="prev" id="${kind}-newer">← Newer</a>` : ''}
<span class="muted">Page ${pageNo}</span>
${hasOlder ? html`<a href="${at(pageNo + 1)}" rel="next" id="${kind}-older">Older →</a>` : ''}
</nav>`;
}

/** Containers of the charts static/data-charts.js draws from the API: dailies, traces on a timeline, the template week. */
function dataCharts(): Html {
  return html`<section class="chart-page" id="data-charts" aria-label="Charts">
<h2 id="daily-charts-heading">Daily measures over the last year</h2>
<p class="muted">Measured days are points; the dashed line is the API's interpolation between them (<code>interpolate=true</code>).</p>
<p id="daily-charts-status" role="status"></p>
<div id="daily-charts"></div>
<p id="no-daily-charts" class="muted" hidden>No daily measures in the last year.</p>
<h2 id="traces-chart-heading">Traces over time</h2>
<p id="traces-chart-status" role="status"></p>
<div id="traces-chart" class="chart" aria-labelledby="traces-chart-heading"></div>
<p id="no-traces-chart" class="muted" hidden>No traces with values yet.</p>
<h2 id="template-week-heading">Template week</h2>
<p class="muted">Training per weekday over the 12 weeks before today: the average and the typical (median) day.</p>
<p id="template-week-status" role="status"></p>
<div id="template-week-chart" class="chart" aria-labelledby="template-week-heading"></div>
</section>`;
}

interface DataView {
  pages: Pages;
  traces: TraceRow[];
  olderTraces: boolean;
  activities: Map<string, ContainingActivity>;
  tests: Map<string, TraceTest>;
  metadata: Map<string, AppMetadata[]>;
  dailies: DailyRow[];
  olderDailies: boolean;
  message?: string | undefined;
}

function dataPage(user: WebUser, v: DataView): string {
  const { pages } = v;
  const units = user.units;
  return page(
    {
      title: 'Traces and daily measures',
      user: headerOf(user),
      charts: true,
      styles: ['/static/chart-pages.css'],
      scripts: ['/static/data-charts.js'],
    },
    html`<h1>Traces and daily measures</h1>
${notice(v.message)}
<p>What applications have stored for you through the API. Check it here and delete what was written wrongly.</p>
${dataCharts()}
<h2 id="traces">Traces</h2>
${
  v.traces.length
    ? html`<div class="table-scroll"><table class="wide" id="traces-table">
<thead><tr><th>Local time</th><th>Sport</th><th>Values</th><th>Notes</th><th>Activity</th><th>Application metadata</th><th></th></tr></thead>
<tbody>${v.traces.map((t) => traceRow(t, v.activities.get(t.id)?.activity, v.tests.get(t.id), v.metadata.get(t.id) ?? [], pages, units))}</tbody>
</table></div>`
    : pages.traces > 1
      ? html`<p id="no-traces">No traces on this page. <a href="${dataUrl({ ...pages, traces: 1 }, { hash: 'traces' })}">Back to the newest</a>.</p>`
      : html`<p id="no-traces">No traces yet. Applications write timestamped measurements (lactate, power, heart rate, …) with <code>POST /api/v1/traces/</code>; see the <a href="/docs">API docs</a>.</p>`
}
${pager('traces', pages, v.olderTraces)}
<h2 id="dailies">Daily measures</h2>
${
  v.dailies.length
    ? html`<div class="table-scroll"><table class="wide" id="dailies-table">
<thead><tr><th>Date</th><th>Measure</th><th>Value</th><th>Source</th><th></th></tr></thead>
<tbody>${v.dailies.map((d) => dailyRow(d, pages))}</tbody>
</table></div>`
    : pages.dailies > 1
      ? html`<p id="no-dailies">No daily measures on this page. <a href="${dataUrl({ ...pages, dailies: 1 }, { hash: 'dailies' })}">Back to the newest</a>.</p>`
      : html`<p id="no-dailies">No daily measures yet. Applications write one value per day (body mass, resting heart rate, sleep, …) with <code>POST /api/v1/dailies/{measure}</code>; see the <a href="/docs">API docs</a>.</p>`
}
${pager('dailies', pages, v.olderDailies)}`,
  );
}

// Queries ----------------------------------------------------------------------------------------

/** Every application's metadata on the given traces (the caller's own), with the application's name, by trace id. */
async function appMetadataOfTraces(db: Db, traceIds: string[]): Promise<Map<string, AppMetadata[]>> {
  const found = new Map<string, AppMetadata[]>();
  if (!traceIds.length) return found;
  const rows = await db
    .selectFrom('trace_app_metadata as m')
    .innerJoin('applications as a', 'a.id', 'm.application_id')
    .select(['m.trace_id', 'm.application_id', 'a.name', 'm.data'])
    .where('m.trace_id', 'in', traceIds)
    .orderBy('a.name')
    .orderBy('m.application_id')
    .execute();
  for (const { trace_id, ...m } of rows) found.set(trace_id, [...(found.get(trace_id) ?? []), m]);
  return found;
}

// Handlers ---------------------------------------------------------------------------------------

const NOTICES: Record<string, string> = { trace_deleted: 'Trace deleted.', daily_deleted: 'Daily value deleted.' };

export async function showData(ctx: Ctx) {
  const user = await requireWebUser(ctx, ctx.url);
  if (!user) return;
  const { db } = ctx.deps;
  const pages = { traces: pageNumber(ctx.query.traces_page), dailies: pageNumber(ctx.query.dailies_page) };
  const [traceRows, dailyRows] = await Promise.all([
    listTraces(db, subjectId(user), {}, { limit: TRACES_PER_PAGE + 1, offset: (pages.traces - 1) * TRACES_PER_PAGE }),
    listDailies(db, subjectId(user), undefined, { limit: DAILIES_PER_PAGE + 1, offset: (pages.dailies - 1) * DAILIES_PER_PAGE }),
  ]);
  const traces = traceRows.slice(0, TRACES_PER_PAGE);
  const [activities, tests, metadata] = await Promise.all([
    activitiesContaining(db, subjectId(user), traces),
    testsOfTraces(db, subjectId(user), traces),
    appMetadataOfTraces(
      db,
      traces.map((t) => t.id),
    ),
  ]);
  const message = Object.keys(NOTICES).find((k) => ctx.query[k] !== undefined);
  sendHtml(
    ctx,
    200,
    dataPage(user, {
      pages,
      traces,
      olderTraces: traceRows.length > TRACES_PER_PAGE,
      activities,
      tests,
      metadata,
      dailies: dailyRows.slice(0, DAILIES_PER_PAGE),
      olderDailies: dailyRows.length > DAILIES_PER_PAGE,
      message: message && NOTICES[message],
    }),
  );
}

/** The signed-in user after the Origin check of a delete form, or undefined after answering with the sign-in redirect. */
async function formUser(ctx: Ctx): Promise<WebUser | undefined> {
  assertSameOrigin(ctx);
  return requireWebUser(ctx, '/data');
}

/** Back to the list at the pages the form was posted from, with the notice. */
function redirectBack(ctx: Ctx, notice: keyof typeof NOTICES, hash: string) {
  const form = formBody(ctx);
  ctx.status = 303;
  ctx.redirect(
    dataUrl({ traces: pageNumber(form.traces_page), dailies: pageNumber(form.dailies_page) }, { extra: { [notice]: '1' }, hash }),
  );
}

export async function deleteTraceFromForm(ctx: Ctx) {
  const user = await formUser(ctx);
  if (!user || !mayChangeData(ctx, user)) return;
  const id = ctx.params.id ?? '';
  if (!isUuid(id) || !(await asActor(user, () => deleteTrace(ctx.deps.db, subjectId(user), id, ctx.deps.now()))))
    return notFound(ctx, 'Trace not found.', user);
  redirectBack(ctx, 'trace_deleted', 'traces');
}

export async function deleteDailyFromForm(ctx: Ctx) {
  const user = await formUser(ctx);
  if (!user || !mayChangeData(ctx, user)) return;
  const measure = ctx.params.measure ?? '';
  const day = parseDay(ctx.params.date ?? '');
  if (
    !Object.hasOwn(DAILY_MEASURES, measure) ||
    !day ||
    day < EARLIEST_DAY ||
    !(await asActor(user, () => deleteDaily(ctx.deps.db, subjectId(user), measure, day)))
  )
    return notFound(ctx, 'Daily value not found.', user);
  if (measure === 'resting_hr') await recomputeLoad(ctx.deps, subjectId(user));
  redirectBack(ctx, 'daily_deleted', 'dailies');
}
