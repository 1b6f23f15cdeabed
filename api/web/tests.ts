import { recomputeLoad } from '../services/training-load/recompute.ts';
import type { Ctx } from '../http/context.ts';
import type { TestRow } from '../../db/database.ts';
import { activitiesOverlapping, createTestWithTraces, deleteTest, findTest, listTests, tracesOfTest } from '../../db/tests.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html, type Html } from './html.ts';
import { field, page } from './layout.ts';
import { formBody, type FieldErrors, type FormValues } from './forms.ts';
import { sportLabel } from './activities.ts';
import { intensityUnit } from './step-table.ts';
import { readTestForm } from './test-form.ts';
import { localMinute, testPage } from './test-page.ts';
import {
  asActor,
  headerOf,
  mayChangeData,
  notFound,
  notice,
  pageNumber,
  queryNotice,
  requireWebUser,
  sendHtml,
  subjectId,
  textareaField,
  type WebUser,
} from './web-common.ts';

/**
 * The signed-in user's tests (/tests): a paged list, newest first, and the form that creates one
 * from a pasted step table (./test-form.ts); one test's page (./test-page.ts) and deleting it.
 */

export const TESTS_PER_PAGE = 50;

const SPORTS = ['cycling', 'cycling.road', 'cycling+stationary', 'running', 'running+stationary', 'swimming', 'walking', 'rowing'];

const RESULT_LABELS: Record<string, string> = {
  lt1: 'LT1',
  lt2: 'LT2',
  critical_power: 'CP',
  critical_speed: 'CS',
  vo2max: 'VO₂max',
  heart_rate_max: 'HRmax',
};

function testRow(t: TestRow): Html {
  const results = Object.entries(t.results ?? {}).flatMap(([k, v]) => (v === null ? [] : [k]));
  return html`<tr data-test-id="${t.id}">
<td><a href="/tests/${t.id}">${localMinute(t.start_time, t.utc_offset_seconds)}</a></td>
<td class="test-title">${t.title ?? html`<span class="muted">—</span>`}</td>
<td data-sport="${t.sport}">${sportLabel(t.sport)}</td>
<td>${t.tags.map((tag, i) => html`${i ? ' ' : ''}<code>${tag}</code>`)}</td>
<td>${results.length ? results.map((k) => RESULT_LABELS[k] ?? k).join(', ') : html`<span class="muted">none yet</span>`}</td>
</tr>`;
}

function pager(pageNo: number, hasOlder: boolean): Html {
  if (pageNo === 1 && !hasOlder) return html``;
  const at = (n: number) => (n === 1 ? '/tests' : `/tests?page=${n}`);
  return html`<nav class="pager" aria-label="Test pages">
${pageNo > 1 ? html`<a href="${at(pageNo - 1)}" rel="prev" id="tests-newer">← Newer</a>` : ''}
<span class="muted">Page ${pageNo}</span>
${hasOlder ? html`<a href="${at(pageNo + 1)}" rel="next" id="tests-older">Older →</a>` : ''}
</nav>`;
}

const STEPS_PLACEHOLDER =
  'Step\tIntensity\tDuration\tLactate\tHeart rate\n0\t0\t0\t1.1\t80\n1\t100\t3:00\t1.2\t120\n2\t150\t3:00\t1.6\t138';

function createForm(user: WebUser, values: FormValues, errors: FieldErrors): Html {
  const sport = values.sport || 'cycling';
  return html`<form method="post" action="/tests" class="stack test-form" id="create-test">
${field({ name: 'title', label: 'Title', value: values.title ?? '', required: false, error: errors.title })}
${field({ name: 'sport', label: 'Sport', value: sport, error: errors.sport, list: 'sports', hint: 'An OpenSportTaxonomy code: cycling (intensity in W), running, swimming, … (in your speed unit).' })}
<datalist id="sports">${SPORTS.map((s) => html`<option value="${s}">${sportLabel(s)}</option>`)}</datalist>
${field({ name: 'start', label: 'Start (your local time)', type: 'datetime-local', value: values.start ?? '', error: errors.start })}
<input type="hidden" name="utc_offset_minutes" id="utc_offset_minutes" value="${values.utc_offset_minutes ?? ''}">
${field({ name: 'tags', label: 'Tags', value: values.tags ?? '', required: false, error: errors.tags, hint: 'Separated by commas.' })}
${textareaField({
  name: 'steps',
  label: 'Steps',
  value: values.steps ?? '',
  rows: 8,
  placeholder: STEPS_PLACEHOLDER,
  error: errors.steps,
  hint: html`Paste the table from a spreadsheet: <code>step, intensity, duration, lactate, heart rate</code>, one row per step, separated by tabs, commas or semicolons; a header row is skipped, heart rate is optional. Intensity in <span id="intensity-unit" data-units="${user.units}">${intensityUnit(sport, user.units)}</span> (W for cycling; your speed or pace unit for other sports, Settings → Units), duration in minutes or m:ss, lactate in mmol/L. A first row of intensity 0 is the resting sample.`,
})}
<button type="submit" id="create-test-submit">Create test</button>
</form>`;
}

function listPage(
  user: WebUser,
  v: {
    tests: TestRow[];
    pageNo: number;
    hasOlder: boolean;
    message?: string | undefined;
    form?: { values: FormValues; errors: FieldErrors };
  },
): string {
  return page(
    { title: 'Tests', user: headerOf(user), styles: ['/static/tests.css'], scripts: ['/static/tests.js'] },
    html`<h1>Tests</h1>
${notice(v.message)}
<p>Lab and field tests: a lactate step test, a ramp, critical-power efforts. Applications write them through the API (<code>POST /api/v1/tests/</code>); here you can enter a step test by pasting its table.</p>
${
  v.tests.length
    ? html`<div class="table-scroll"><table class="wide" id="tests-table">
<thead><tr><th>Start</th><th>Title</th><th>Sport</th><th>Tags</th><th>Results</th></tr></thead>
<tbody>${v.tests.map(testRow)}</tbody>
</table></div>`
    : v.pageNo > 1
      ? html`<p id="no-tests">No tests on this page. <a href="/tests">Back to the newest</a>.</p>`
      : html`<p id="no-tests">No tests yet. Create one below.</p>`
}
${pager(v.pageNo, v.hasOlder)}
<h2 id="new-test">New step test</h2>
${createForm(user, v.form?.values ?? {}, v.form?.errors ?? {})}`,
  );
}

// Handlers ---------------------------------------------------------------------------------------

const LIST_NOTICES: Record<string, string> = { deleted: 'Test deleted.' };
const TEST_NOTICES: Record<string, string> = { created: 'Test created.', accepted: 'Results kept.' };

async function listView(ctx: Ctx, user: WebUser, pageNo: number) {
  const rows = await listTests(ctx.deps.db, subjectId(user), {}, { limit: TESTS_PER_PAGE + 1, offset: (pageNo - 1) * TESTS_PER_PAGE });
  return { tests: rows.slice(0, TESTS_PER_PAGE), pageNo, hasOlder: rows.length > TESTS_PER_PAGE };
}

export async function showTests(ctx: Ctx) {
  const user = await requireWebUser(ctx, ctx.url);
  if (!user) return;
  const view = await listView(ctx, user, pageNumber(ctx.query.page));
  sendHtml(ctx, 200, listPage(user, { ...view, message: queryNotice(ctx, LIST_NOTICES) }));
}

export async function createTestFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/tests');
  if (!user || !mayChangeData(ctx, user)) return;
  const values = formBody(ctx);
  const read = readTestForm(values, user.units);
  if ('errors' in read) {
    const view = await listView(ctx, user, 1);
    sendHtml(ctx, 422, listPage(user, { ...view, form: { values, errors: read.errors } }));
    return;
  }
  const { test } = await asActor(user, () =>
    createTestWithTraces(ctx.deps.db, subjectId(user), read.fields, read.traces, null, ctx.deps.now()),
  );
  await recomputeLoad(ctx.deps, subjectId(user));
  ctx.status = 303;
  ctx.redirect(`/tests/${test.id}?created=1`);
}

/** The signed-in user's test named in the path, or undefined after answering (sign-in redirect or 404). */
async function ownTest(ctx: Ctx, opts: { post: boolean }): Promise<{ user: WebUser; test: TestRow } | undefined> {
  if (opts.post) assertSameOrigin(ctx);
  const id = ctx.params.id ?? '';
  const user = await requireWebUser(ctx, opts.post ? `/tests/${encodeURIComponent(id)}` : ctx.path);
  if (!user) return undefined;
  const test = await findTest(ctx.deps.db, subjectId(user), id);
  if (!test) {
    notFound(ctx, 'Test not found.', user);
    return undefined;
  }
  return { user, test };
}

export async function showTest(ctx: Ctx) {
  const found = await ownTest(ctx, { post: false });
  if (!found) return;
  const { db } = ctx.deps;
  const [traces, activities] = await Promise.all([
    tracesOfTest(db, subjectId(found.user), found.test, 'auto'),
    activitiesOverlapping(db, subjectId(found.user), found.test),
  ]);
  sendHtml(ctx, 200, testPage(found.user, { test: found.test, traces, activities, message: queryNotice(ctx, TEST_NOTICES) }));
}

export async function deleteTestFromForm(ctx: Ctx) {
  const found = await ownTest(ctx, { post: true });
  if (!found || !mayChangeData(ctx, found.user)) return;
  if (!(await asActor(found.user, () => deleteTest(ctx.deps.db, subjectId(found.user), found.test.id, ctx.deps.now()))))
    return notFound(ctx, 'Test not found.', found.user);
  await recomputeLoad(ctx.deps, subjectId(found.user));
  ctx.status = 303;
  ctx.redirect('/tests?deleted=1');
}
