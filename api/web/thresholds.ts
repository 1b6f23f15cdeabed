import type { Ctx } from '../http/context.ts';
import type { TestRow } from '../../db/database.ts';
import { declaredThresholds, replaceThresholds, testEntries, type DeclaredThreshold } from '../../db/training-load.ts';
import { findTest } from '../../db/tests.ts';
import type { ThresholdEntry } from '../../engine/load/thresholds.ts';
import { recomputeLoad } from '../services/training-load/recompute.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html, type Html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { formBody, type FieldErrors, type FormValues } from './forms.ts';
import { sportLabel, testName } from './activities.ts';
import { readThresholdForm, speedFieldLabel, speedInputHint, THRESHOLD_COLUMNS, thresholdText } from './thresholds-form.ts';
import {
  asActor,
  displayName,
  headerOf,
  mayChangeData,
  notice,
  queryNotice,
  requireWebUser,
  sendHtml,
  subjectId,
  type WebUser,
} from './web-common.ts';

/**
 * Settings → Thresholds (/settings/thresholds): the declared history of critical power, W′, critical
 * speed and heart rates (what PUT /api/v1/profile/thresholds replaces), an entry added or deleted by a
 * form post, and the entries lab tests' results give, linked to their tests. While acting as someone,
 * theirs (./acting.ts). A change queues the recomputation of the load it alters, as the API's does.
 */

const PATH = '/settings/thresholds';
const SPORTS = ['cycling', 'cycling.road', 'cycling.mountain', 'running', 'running.trail', 'swimming', 'walking', 'rowing'];

interface ThresholdsState {
  declared: DeclaredThreshold[];
  fromTests: { entry: ThresholdEntry; test: TestRow | undefined }[];
  message?: string | undefined;
  values?: FormValues;
  errors?: FieldErrors;
}

function valueCells(entry: Partial<DeclaredThreshold> & { sport: string }, user: WebUser): Html[] {
  return THRESHOLD_COLUMNS.map(({ key }) => {
    const v = entry[key];
    return typeof v === 'number'
      ? html`<td data-field="${key}">${thresholdText(key, v, entry.sport, user.units)}</td>`
      : html`<td data-field="${key}"><span class="muted">—</span></td>`;
  });
}

const HEADINGS = html`<th>Sport</th><th>From</th>${THRESHOLD_COLUMNS.map((c) => html`<th>${c.short}</th>`)}`;

function declaredTable(user: WebUser, declared: DeclaredThreshold[]): Html {
  if (!declared.length)
    return html`<p id="no-thresholds">No entries yet: add your critical power, threshold pace or heart rates below, and every activity gets its training stress and zones.</p>`;
  return html`<div class="table-scroll"><table class="wide" id="thresholds">
<thead><tr>${HEADINGS}<th></th></tr></thead>
<tbody>${declared.map(
    (e) => html`<tr data-sport="${e.sport}" data-valid-from="${e.valid_from}">
<td>${sportLabel(e.sport)}</td><td><time datetime="${e.valid_from}">${e.valid_from}</time></td>${valueCells(e, user)}
<td><form method="post" action="${PATH}/delete" class="inline"><input type="hidden" name="sport" value="${e.sport}"><input type="hidden" name="valid_from" value="${e.valid_from}"><button type="submit" class="danger small" aria-label="Delete the ${sportLabel(e.sport)} entry from ${e.valid_from}">Delete</button></form></td>
</tr>`,
  )}</tbody>
</table></div>`;
}

function testsTable(user: WebUser, fromTests: ThresholdsState['fromTests']): Html {
  if (!fromTests.length)
    return html`<p id="no-test-thresholds" class="muted">None: a lab test's critical power, W′, critical speed or heart rates show here once its results hold them (<a href="/tests">Tests</a>).</p>`;
  return html`<div class="table-scroll"><table class="wide" id="test-thresholds">
<thead><tr>${HEADINGS}<th>Test</th></tr></thead>
<tbody>${fromTests.map(
    ({ entry, test }) => html`<tr data-test-id="${entry.test_id ?? ''}">
<td>${sportLabel(entry.sport)}</td><td><time datetime="${entry.valid_from}">${entry.valid_from}</time></td>${valueCells(entry, user)}
<td><a href="/tests/${entry.test_id ?? ''}">${test ? testName(test) : 'The test'}</a></td>
</tr>`,
  )}</tbody>
</table></div>`;
}

function addForm(user: WebUser, values: FormValues, errors: FieldErrors): Html {
  const optional = (name: (typeof THRESHOLD_COLUMNS)[number]) =>
    html`<div class="field">${field({
      name: name.key,
      label: name.key === 'critical_speed' ? speedFieldLabel(values.sport?.trim() || 'cycling', user.units) : name.label,
      value: values[name.key] ?? '',
      required: false,
      error: errors[name.key],
      ...(name.key === 'critical_speed' ? { hint: speedInputHint(user.units) } : {}),
    })}</div>`;
  return html`<form method="post" action="${PATH}" class="stack" id="add-threshold" novalidate>
${formError(Object.values(errors).some(Boolean) ? (errors.form ?? 'Please correct the fields marked below.') : undefined)}
<div class="threshold-fields" data-units="${user.units}">
<div class="field">${field({ name: 'sport', label: 'Sport', value: values.sport ?? 'cycling', list: 'threshold-sports', error: errors.sport, hint: 'It holds for the sub-sports too: cycling for every ride.' })}</div>
<datalist id="threshold-sports">${SPORTS.map((s) => html`<option value="${s}">${sportLabel(s)}</option>`)}</datalist>
<div class="field">${field({ name: 'valid_from', label: 'Holds from', type: 'date', value: values.valid_from ?? '', error: errors.valid_from })}</div>
${THRESHOLD_COLUMNS.map(optional)}
</div>
<p class="hint">Leave out what you do not know: the earlier entry's value holds.</p>
<button type="submit" id="add-threshold-submit">Add entry</button>
</form>`;
}

function thresholdsPage(user: WebUser, s: ThresholdsState): string {
  const whose = user.acting ? `${displayName(user.acting)}'s` : 'Your';
  return page(
    { title: 'Thresholds', user: headerOf(user), scripts: ['/static/thresholds.js'] },
    html`<h1>Thresholds</h1>
${settingsNav(PATH)}
<div class="thresholds-page">
${notice(s.message)}
<p>${whose} critical power, W′, critical speed (threshold pace) and heart rates, with their history. An entry holds for its sport and its sub-sports from its day until the next entry of that sport. Each activity's training stress, time in zones and W′ balance use the values of its day; after a change they are computed again in the background.</p>
<h2>${whose} entries</h2>
${declaredTable(user, s.declared)}
<h2 id="add-heading">Add an entry</h2>
${addForm(user, s.values ?? {}, s.errors ?? {})}
<h2>From lab tests</h2>
<p class="hint">A test's results count as an entry from the test's day; on the same day, your own entry wins. Change them on the test's page.</p>
${testsTable(user, s.fromTests)}
</div>`,
  );
}

async function pageState(ctx: Ctx, user: WebUser): Promise<Pick<ThresholdsState, 'declared' | 'fromTests'>> {
  const { db } = ctx.deps;
  const subject = subjectId(user);
  const [declared, entries] = await Promise.all([declaredThresholds(db, subject), testEntries(db, subject)]);
  entries.sort((a, b) => (a.sport === b.sport ? a.valid_from.localeCompare(b.valid_from) : a.sport.localeCompare(b.sport)));
  const ids = [...new Set(entries.map((e) => e.test_id).filter((id): id is string => !!id))];
  const tests = new Map(await Promise.all(ids.map(async (id) => [id, await findTest(db, subject, id)] as const)));
  return { declared, fromTests: entries.map((entry) => ({ entry, test: entry.test_id ? tests.get(entry.test_id) : undefined })) };
}

const NOTICES: Record<string, string> = {
  added: 'Entry added: the activities it changes are being computed again.',
  deleted: 'Entry deleted: the activities it changes are being computed again.',
};

export async function showThresholds(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  sendHtml(ctx, 200, thresholdsPage(user, { ...(await pageState(ctx, user)), message: queryNotice(ctx, NOTICES) }));
}

/** Store the new history (recording who acted while acting as someone) and queue what it changes. */
async function storeHistory(ctx: Ctx, user: WebUser, entries: DeclaredThreshold[]): Promise<void> {
  const subject = subjectId(user);
  const { stale } = await asActor(user, () => replaceThresholds(ctx.deps.db, subject, entries));
  if (stale) await recomputeLoad(ctx.deps, subject);
}

/** POST /settings/thresholds: an entry added to the declared history; a refused value is said next to its field, nothing typed lost. */
export async function addThresholdFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, PATH);
  if (!user || !mayChangeData(ctx, user)) return;
  const values = formBody(ctx);
  const state = await pageState(ctx, user);
  const read = readThresholdForm(values, state.declared, user.units);
  if ('errors' in read) {
    sendHtml(ctx, 422, thresholdsPage(user, { ...state, values, errors: read.errors }));
    return;
  }
  await storeHistory(
    ctx,
    user,
    read.entries.map(({ origin: _origin, ...e }) => e),
  );
  ctx.status = 303;
  ctx.redirect(`${PATH}?added=1`);
}

/** POST /settings/thresholds/delete: the entry of the posted sport and day removed from the declared history. */
export async function deleteThresholdFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, PATH);
  if (!user || !mayChangeData(ctx, user)) return;
  const { sport, valid_from } = formBody(ctx);
  const declared = await declaredThresholds(ctx.deps.db, subjectId(user));
  const kept = declared.filter((e) => e.sport !== sport || e.valid_from !== valid_from);
  if (kept.length !== declared.length) await storeHistory(ctx, user, kept);
  ctx.status = 303;
  ctx.redirect(`${PATH}?deleted=1`);
}
