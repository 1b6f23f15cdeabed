import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html, type Html } from './html.ts';
import { field, formError, page, settingsNav } from './layout.ts';
import { fieldErrors, formBody, storable, type FieldErrors, type FormValues } from './forms.ts';
import { headerOf, notFound, notice, queryNotice, requireWebUser, sendHtml, when, type WebUser } from './web-common.ts';
import { displayName } from '../services/coaching/model.ts';
import {
  acceptInvitation,
  authorizedTeams,
  authorizeTeam,
  createTeam,
  findTeam,
  invitationTeam,
  revokeTeamAuthorization,
  teamsOfMember,
} from '../../db/teams.ts';
import { changesByOthers } from '../../db/events.ts';

/**
 * Settings → Teams (docs/coaching.md, "The web app"): who can see my data and with which scopes (and
 * stopping it), what others changed for me, the teams I belong to, creating one, joining one with an
 * invitation link, and sharing my data with a team; and the invitation link's own page.
 */

const TEAMS_PAGE = '/settings/teams';
const TeamName = z.object({ name: z.string().trim().min(1, 'Give the team a name.').max(100, 'At most 100 characters.') });
const ShareForm = z.object({
  team_id: z.string().trim().uuid('Paste the team id your coach gave you.'),
  access: z.enum(['read', 'write'], { message: 'Choose what the team may do.' }),
});

const EVENT_WORDS: Record<string, string> = {
  activity_created: 'added an activity',
  activity_updated: 'updated an activity',
  activity_deleted: 'deleted an activity',
  trace_created: 'added a trace',
  trace_updated: 'changed a trace',
  trace_deleted: 'deleted a trace',
  test_created: 'added a test',
  test_updated: 'changed a test',
  test_deleted: 'deleted a test',
  source_processed: 'uploaded a file',
  source_failed: 'uploaded a file that could not be read',
};

interface TeamsState {
  notice?: string;
  values?: FormValues;
  errors?: FieldErrors;
  form?: 'create' | 'join' | 'share';
  formMessage?: string;
}

async function teamsPage(ctx: Ctx, user: WebUser, s: TeamsState = {}): Promise<string> {
  const { db } = ctx.deps;
  const [shared, mine, changes] = await Promise.all([
    authorizedTeams(db, user.id),
    teamsOfMember(db, user.id),
    changesByOthers(db, user.id),
  ]);
  const e = s.errors ?? {};
  const errorOf = (form: TeamsState['form']) => (s.form === form ? formError(s.formMessage) : html``);
  const typedIn = (form: TeamsState['form'], name: string) => (s.form === form ? s.values?.[name] : undefined);
  return page(
    { title: 'Teams', user: headerOf(user) },
    html`<h1>Teams</h1>
${settingsNav(TEAMS_PAGE)}
${notice(s.notice)}
<section aria-labelledby="shared-heading">
<h2 id="shared-heading">Who can see your data</h2>
${
  shared.length
    ? html`<ul class="connections" id="authorized-teams">${shared.map(
        (t) => html`<li data-team-id="${t.id}"><div>
<h3>${t.name}</h3>
<p class="muted">Shared ${when(t.authorized_at)}. Its coaches may ${t.scopes.includes('data:write') ? 'read and change' : 'read'} your data:
${t.scopes.map((sc) => html`<code>${sc}</code> `)}</p>
<form method="post" action="/settings/teams/${t.id}/revoke" class="inline"><button type="submit" class="danger" id="revoke-team-${t.id}">Stop sharing</button></form>
</div></li>`,
      )}</ul>`
    : html`<p id="no-authorized-teams">No team can see your data.</p>`
}
<h3>Share your data with a team</h3>
<form method="post" action="/settings/teams/share" class="stack" novalidate id="share-form">
${errorOf('share')}
${field({ name: 'team_id', label: 'Team id (your coach gives it to you)', value: typedIn('share', 'team_id'), error: s.form === 'share' ? e.team_id : undefined })}
<fieldset><legend>The team's coaches may</legend>
<div class="check"><input type="radio" id="access-read" name="access" value="read" checked><label for="access-read">read your data (<code>data:read</code>)</label></div>
<div class="check"><input type="radio" id="access-write" name="access" value="write"><label for="access-write">read and change it (<code>data:read</code>, <code>data:write</code>)</label></div>
</fieldset>
<button type="submit">Share</button>
</form>
</section>
<section aria-labelledby="changes-heading">
<h2 id="changes-heading">Changes others made for you</h2>
${
  changes.length
    ? html`<table class="wide" id="changes-by-others"><thead><tr><th>When</th><th>Who</th><th>What</th></tr></thead><tbody>${changes.map(
        (c) =>
          html`<tr><td>${when(c.occurred_at)}</td><td>${displayName(c)}</td><td>${EVENT_WORDS[c.type] ?? c.type} <code>${c.resource_id.slice(0, 8)}</code></td></tr>`,
      )}</tbody></table>`
    : html`<p id="no-changes-by-others">Nobody else has changed your data.</p>`
}
</section>
<section aria-labelledby="mine-heading">
<h2 id="mine-heading">Your teams</h2>
${
  mine.length
    ? html`<ul id="my-teams">${mine.map((t) => html`<li><a href="/teams/${t.id}">${t.name}</a> <span class="muted">(${t.role})</span></li>`)}</ul>`
    : html`<p id="no-teams">You are not a member of any team.</p>`
}
<h3>Create a team</h3>
<form method="post" action="/settings/teams" class="stack" novalidate id="create-team-form">
${errorOf('create')}
${field({ name: 'name', label: 'Team name', value: typedIn('create', 'name'), error: s.form === 'create' ? e.name : undefined })}
<button type="submit">Create team</button>
</form>
<h3>Join a team</h3>
<form method="post" action="/settings/teams/join" class="stack" novalidate id="join-team-form">
${errorOf('join')}
${field({ name: 'invitation', label: 'Invitation link', value: typedIn('join', 'invitation'), error: s.form === 'join' ? e.invitation : undefined })}
<button type="submit">Join</button>
</form>
</section>`,
  );
}

export async function showTeams(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const message = queryNotice(ctx, {
    created: 'Team created.',
    joined: 'You joined the team.',
    shared: 'The team can now see your data.',
    revoked: 'The team can no longer see your data; its coaches’ access ended at once.',
  });
  sendHtml(ctx, 200, await teamsPage(ctx, user, { notice: message }));
}

/** A form's answer: the page again with its errors (422), nothing stored. */
async function refused(ctx: Ctx, user: WebUser, form: TeamsState['form'], values: FormValues, errors: FieldErrors, message: string) {
  sendHtml(ctx, 422, await teamsPage(ctx, user, { form, values, errors, formMessage: message }));
}

function done(ctx: Ctx, path: string) {
  ctx.status = 303;
  ctx.redirect(path);
}

export async function createTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, TEAMS_PAGE);
  if (!user) return;
  const values = formBody(ctx);
  const parsed = storable(TeamName).safeParse(values);
  if (!parsed.success) return refused(ctx, user, 'create', values, fieldErrors(parsed.error), 'Please correct the field marked below.');
  const team = await createTeam(
    ctx.deps.db,
    { name: parsed.data.name, description: '', url: null, image: null, privacy_statement: null },
    user.id,
  );
  done(ctx, `/teams/${team.id}?created=1`);
}

/** The secret at the end of an invitation link, or the text itself. */
function invitationSecret(text: string): string {
  return text.trim().split('/').pop() ?? '';
}

export async function joinTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, TEAMS_PAGE);
  if (!user) return;
  const values = formBody(ctx);
  const team = await acceptInvitation(ctx.deps.db, invitationSecret(values.invitation ?? ''), user.id, ctx.deps.now());
  if (!team)
    return refused(
      ctx,
      user,
      'join',
      values,
      { invitation: 'This link was used, has expired or was revoked: ask for a new one.' },
      'The invitation is not valid.',
    );
  done(ctx, `/teams/${team.id}?joined=1`);
}

export async function shareWithTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, TEAMS_PAGE);
  if (!user) return;
  const values = formBody(ctx);
  const parsed = storable(ShareForm).safeParse(values);
  const team = parsed.success ? await findTeam(ctx.deps.db, parsed.data.team_id) : undefined;
  if (!parsed.success || !team)
    return refused(
      ctx,
      user,
      'share',
      values,
      parsed.success ? { team_id: 'No team has this id.' } : fieldErrors(parsed.error),
      'Please correct the field marked below.',
    );
  await authorizeTeam(ctx.deps.db, team.id, user.id, parsed.data.access === 'write' ? ['data:read', 'data:write'] : ['data:read']);
  done(ctx, `${TEAMS_PAGE}?shared=1`);
}

export async function revokeTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, TEAMS_PAGE);
  if (!user) return;
  if (!(await revokeTeamAuthorization(ctx.deps.db, ctx.params.id ?? '', user.id)))
    return notFound(ctx, 'You do not share your data with this team.', user);
  done(ctx, `${TEAMS_PAGE}?revoked=1`);
}

function joinPage(user: WebUser, team: { name: string; role: string }, secret: string): Html {
  return html`<h1>Join ${team.name}</h1>
<p>You are invited to join <strong>${team.name}</strong> as ${team.role === 'owner' ? 'an owner' : 'a coach'}: you will see the athletes who share their data with the team.</p>
<form method="post" action="/teams/join/${secret}" class="stack"><button type="submit" id="join-button">Join ${team.name}</button></form>
<p class="muted">Signed in as ${displayName(user)}.</p>`;
}

/** The invitation link's page: which team it is for, and a button to join (signed-out visitors sign in first). */
export async function showJoinPage(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const secret = ctx.params.secret ?? '';
  const team = await invitationTeam(ctx.deps.db, secret, ctx.deps.now());
  if (!team) return notFound(ctx, 'This invitation link was used, has expired or was revoked: ask for a new one.', user);
  ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 200, page({ title: `Join ${team.name}`, user: headerOf(user) }, joinPage(user, team, secret)));
}

export async function joinFromPage(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx);
  if (!user) return;
  const team = await acceptInvitation(ctx.deps.db, ctx.params.secret ?? '', user.id, ctx.deps.now());
  if (!team) return notFound(ctx, 'This invitation link was used, has expired or was revoked: ask for a new one.', user);
  done(ctx, `/teams/${team.id}?joined=1`);
}
