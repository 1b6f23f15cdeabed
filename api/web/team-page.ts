import { z } from 'zod';
import type { Ctx } from '../http/context.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { html } from './html.ts';
import { field, formError, page } from './layout.ts';
import { fieldErrors, formBody, storable } from './forms.ts';
import { headerOf, notFound, notice, queryNotice, requireWebUser, sendHtml, when, type WebUser } from './web-common.ts';
import { displayName, invitationUrl } from '../services/coaching/model.ts';
import { ROSTER_DURATIONS, rosterEntry, type RosterEntry } from '../services/coaching/roster.ts';
import { stashShownOnce, takeShownOnce } from './shown-once.ts';
import {
  createInvitation,
  deleteTeam,
  invitationStatus,
  removeMember,
  revokeInvitation,
  teamInvitations,
  teamMembers,
  teamOfMember,
  updateTeam,
  type TeamOfUser,
} from '../../db/teams.ts';
import { sharedUsers, type SharedUser } from '../../db/managed-users.ts';

/**
 * A team's page, for its members (docs/coaching.md, "The web app"): the roster of the athletes who
 * share with it (latest activity, the last 7 days' training time, best power over 90 days against the
 * 90 before), the members, and for owners the invitation links, renaming and deleting.
 */

const DAY_MS = 86_400_000;
const DURATION_LABELS = ['5 s', '1 min', '5 min', '20 min'];
const Rename = z.object({ name: z.string().trim().min(1, 'Give the team a name.').max(100, 'At most 100 characters.') });

/** Training time as `3 h 05 min`. */
function hoursMinutes(seconds: number): string {
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

function watts(v: number | null) {
  return v === null ? html`<span class="muted">–</span>` : html`${Math.round(v)} W`;
}

function change(now: number | null, before: number | null) {
  if (now === null || before === null || before === 0) return html``;
  const pct = ((now - before) / before) * 100;
  return html` <span class="${pct >= 0 ? 'up' : 'down'}">(${pct >= 0 ? '+' : ''}${pct.toFixed(0)} %)</span>`;
}

function rosterTable(teamId: string, athletes: SharedUser[], entries: RosterEntry[]) {
  if (!athletes.length) return html`<p id="no-athletes">No athlete shares their data with this team yet: give them the team id below.</p>`;
  return html`<div class="table-scroll"><table class="wide" id="roster">
<thead><tr><th>Athlete</th><th>Latest activity</th><th>Last 7 days</th>${DURATION_LABELS.map((d) => html`<th>${d}, 90 days</th>`)}</tr></thead>
<tbody>${athletes.map((a, i) => {
    const r = entries[i]!;
    return html`<tr data-user-id="${a.id}">
<td>${displayName(a)}<br><span class="muted">${a.scopes.includes('data:write') ? 'read and write' : 'read'}</span>
<form method="post" action="/act-as" class="inline"><input type="hidden" name="user_id" value="${a.id}"><input type="hidden" name="team_id" value="${teamId}">
<button type="submit" class="small" id="act-as-${a.id}">Act as</button></form></td>
<td>${r.latest ? html`${r.latest.name ?? r.latest.sport}<br>${when(r.latest.start)}` : html`<span class="muted">none</span>`}</td>
<td>${hoursMinutes(r.weekSeconds)}</td>
${ROSTER_DURATIONS.map((_, k) => html`<td>${watts(r.recent[k]!)}${change(r.recent[k]!, r.previous[k]!)}</td>`)}
</tr>`;
  })}</tbody></table></div>
<p class="muted">Best power held for each duration in the last 90 days; in brackets, the change against the 90 days before.</p>`;
}

async function teamPage(
  ctx: Ctx,
  user: WebUser,
  team: TeamOfUser,
  state: { notice?: string; link?: string; renameError?: string; name?: string },
) {
  const { db } = ctx.deps;
  const owner = team.role === 'owner';
  const [athletes, members, invitations] = await Promise.all([
    sharedUsers(db, user.id, team.id),
    teamMembers(db, team.id),
    owner ? teamInvitations(db, team.id) : Promise.resolve([]),
  ]);
  const signal = AbortSignal.timeout(10_000);
  const entries = await Promise.all(athletes.map((a) => rosterEntry(ctx.deps, a.id, signal)));
  const now = ctx.deps.now();
  return page(
    { title: team.name, user: headerOf(user) },
    html`<h1>${team.name}</h1>
<p><a href="/settings/teams">Teams</a> · You are ${owner ? 'an owner' : 'a coach'} of this team. Team id for athletes to share with it: <code id="team-id">${team.id}</code></p>
${notice(state.notice)}
${
  state.link
    ? html`<div class="secret-once" role="status"><p>Invitation link (shown only this once; single use):</p><p><code id="new-invitation" class="token">${state.link}</code></p></div>`
    : ''
}
<section aria-labelledby="roster-heading"><h2 id="roster-heading">Athletes</h2>${rosterTable(team.id, athletes, entries)}</section>
<section aria-labelledby="members-heading"><h2 id="members-heading">Members</h2>
<ul id="members">${members.map(
      (m) => html`<li data-user-id="${m.user_id}">${displayName(m)} <span class="muted">(${m.role})</span>
${
  m.user_id === user.id
    ? html`<form method="post" action="/teams/${team.id}/members/${m.user_id}/remove" class="inline"><button type="submit" class="danger small" id="leave-team">Leave</button></form>`
    : owner
      ? html`<form method="post" action="/teams/${team.id}/members/${m.user_id}/remove" class="inline"><button type="submit" class="danger small">Remove</button></form>`
      : ''
}</li>`,
    )}</ul></section>
${
  owner
    ? html`<section aria-labelledby="invitations-heading"><h2 id="invitations-heading">Invitations</h2>
<form method="post" action="/teams/${team.id}/invitations" class="inline" id="invite-form">
<label for="role">Role</label> <select id="role" name="role"><option value="coach">coach</option><option value="owner">owner</option></select>
<button type="submit">Make an invitation link</button></form>
${
  invitations.length
    ? html`<table class="wide" id="invitations"><thead><tr><th>Made</th><th>Role</th><th>Status</th><th></th></tr></thead><tbody>${invitations.map(
        (i) => {
          const state = invitationStatus(i, now);
          const status = state === 'open' ? `open until ${i.expires_at.toISOString().slice(0, 10)}` : state;
          return html`<tr><td>${when(i.created_at)}</td><td>${i.role}</td><td>${status}</td><td>${
            state === 'open'
              ? html`<form method="post" action="/teams/${team.id}/invitations/${i.id}/revoke" class="inline"><button type="submit" class="danger small">Revoke</button></form>`
              : ''
          }</td></tr>`;
        },
      )}</tbody></table>`
    : ''
}</section>
<section aria-labelledby="manage-heading"><h2 id="manage-heading">Rename or delete</h2>
<form method="post" action="/teams/${team.id}/rename" class="stack" novalidate id="rename-form">
${formError(state.renameError)}
${field({ name: 'name', label: 'Team name', value: state.name ?? team.name, error: state.renameError })}
<button type="submit">Rename</button></form>
<form method="post" action="/teams/${team.id}/delete" class="inline"><button type="submit" class="danger" id="delete-team">Delete the team</button></form>
<p class="muted">Deleting the team ends every coach's access to its athletes at once.</p></section>`
    : ''
}`,
  );
}

/** The team with the user's role, or a 404 page (the same for a team that does not exist and one the user is no member of). */
async function memberTeamOrNotFound(ctx: Ctx, user: WebUser): Promise<TeamOfUser | undefined> {
  const team = await teamOfMember(ctx.deps.db, ctx.params.id ?? '', user.id);
  if (!team) notFound(ctx, 'No such team among yours.', user);
  return team;
}

export async function showTeam(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const team = await memberTeamOrNotFound(ctx, user);
  if (!team) return;
  const link = team.role === 'owner' ? await takeShownOnce<string>(ctx, user.id, `/teams/${team.id}`) : undefined;
  const message = queryNotice(ctx, {
    created: 'Team created.',
    joined: 'You joined the team.',
    renamed: 'Team renamed.',
    invitation_revoked: 'Invitation revoked.',
    removed: 'Member removed.',
  });
  if (link) ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 200, await teamPage(ctx, user, team, { ...(message ? { notice: message } : {}), ...(link ? { link } : {}) }));
}

/** An owner's form: the team, or undefined after answering (404 for no member, 403 page for a coach). */
async function ownerTeam(ctx: Ctx, user: WebUser): Promise<TeamOfUser | undefined> {
  const team = await memberTeamOrNotFound(ctx, user);
  if (team && team.role !== 'owner') {
    notFound(ctx, 'Only an owner of the team may do this.', user);
    return undefined;
  }
  return team;
}

export async function createInvitationFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, `/teams/${ctx.params.id}`);
  if (!user) return;
  const team = await ownerTeam(ctx, user);
  if (!team) return;
  const role = formBody(ctx).role === 'owner' ? 'owner' : 'coach';
  const { secret } = await createInvitation(ctx.deps.db, {
    teamId: team.id,
    role,
    createdBy: user.id,
    expiresAt: new Date(ctx.deps.now().getTime() + 7 * DAY_MS),
  });
  const link = invitationUrl(ctx.deps.config.BASE_URL, secret);
  // Shown once, on the page this redirects to: never in a URL (api/web/shown-once.ts). Without Redis, on this answer.
  const next = await stashShownOnce(ctx, user.id, `/teams/${team.id}`, link);
  if (next) {
    ctx.status = 303;
    ctx.redirect(next);
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 201, await teamPage(ctx, user, team, { link }));
}

export async function revokeInvitationFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, `/teams/${ctx.params.id}`);
  if (!user) return;
  const team = await ownerTeam(ctx, user);
  if (!team) return;
  if (!(await revokeInvitation(ctx.deps.db, team.id, ctx.params.invitation ?? '', ctx.deps.now())))
    return notFound(ctx, 'No open invitation with this id.', user);
  ctx.status = 303;
  ctx.redirect(`/teams/${team.id}?invitation_revoked=1`);
}

export async function removeMemberFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, `/teams/${ctx.params.id}`);
  if (!user) return;
  const leaving = ctx.params.user === user.id;
  const team = leaving ? await memberTeamOrNotFound(ctx, user) : await ownerTeam(ctx, user);
  if (!team) return;
  const outcome = await removeMember(ctx.deps.db, team.id, ctx.params.user ?? '');
  if (outcome === 'not_member') return notFound(ctx, 'Not a member of the team.', user);
  if (outcome === 'last_owner') {
    sendHtml(
      ctx,
      409,
      await teamPage(ctx, user, team, { notice: 'The last owner cannot leave: delete the team, or invite another owner first.' }),
    );
    return;
  }
  ctx.status = 303;
  ctx.redirect(leaving ? '/settings/teams' : `/teams/${team.id}?removed=1`);
}

export async function renameTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, `/teams/${ctx.params.id}`);
  if (!user) return;
  const team = await ownerTeam(ctx, user);
  if (!team) return;
  const values = formBody(ctx);
  const parsed = storable(Rename).safeParse(values);
  if (!parsed.success) {
    sendHtml(ctx, 422, await teamPage(ctx, user, team, { renameError: fieldErrors(parsed.error).name, name: values.name ?? '' }));
    return;
  }
  await updateTeam(ctx.deps.db, team.id, { name: parsed.data.name });
  ctx.status = 303;
  ctx.redirect(`/teams/${team.id}?renamed=1`);
}

export async function deleteTeamFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, `/teams/${ctx.params.id}`);
  if (!user) return;
  const team = await ownerTeam(ctx, user);
  if (!team) return;
  await deleteTeam(ctx.deps.db, team.id);
  ctx.status = 303;
  ctx.redirect('/settings/teams');
}
