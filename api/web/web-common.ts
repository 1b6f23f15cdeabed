import type { Ctx } from '../http/context.ts';
import type { User } from '../../db/database.ts';
import { currentWebUser, type ActingAs } from '../http/web-session.ts';
import { withActor } from '../../lib/actor.ts';
import { displayName as userDisplayName } from '../services/coaching/model.ts';
import { html, type Html } from './html.ts';
import { errorPage } from './layout.ts';

export type WebUser = User & { sessionId: string; acting?: ActingAs };

/** Whose data a data page shows and changes: the athlete the session acts as, else the signed-in user. */
export function subjectId(user: WebUser): string {
  return user.acting?.id ?? user.id;
}

/** A change made from a data page: while acting as someone, recorded with the signed-in user as who acted (lib/actor.ts). */
export function asActor<T>(user: WebUser, change: () => T): T {
  return withActor(user.acting ? user.id : undefined, change);
}

/** False (after answering with a 403 page) when the session acts as someone with read access only. */
export function mayChangeData(ctx: Ctx, user: WebUser): boolean {
  if (!user.acting || user.acting.canWrite) return true;
  sendHtml(
    ctx,
    403,
    errorPage(403, `You act as ${displayName(user.acting)} with read access only: nothing was changed.`, { name: displayName(user) }),
  );
  return false;
}

/**
 * The signed-in user, or undefined after answering with a redirect to the sign-in page. `back` is
 * where to return after signing in (a GET page; defaults to the requested path, right for GETs).
 */
export async function requireWebUser(ctx: Ctx, back: string = ctx.path): Promise<WebUser | undefined> {
  const user = await currentWebUser(ctx);
  if (!user) {
    ctx.status = 303;
    ctx.redirect(`/signin?next=${encodeURIComponent(back)}`);
  }
  return user;
}

export function displayName(user: Pick<User, 'first_name' | 'last_name'>): string {
  return userDisplayName(user);
}

/** What the page frame shows of the signed-in user: their name in the header, their units on the body, and whom they act as. */
export function headerOf(user: Pick<User, 'first_name' | 'last_name' | 'units'> & { acting?: ActingAs | undefined }): {
  name: string;
  units: User['units'];
  acting?: { name: string; canWrite: boolean };
} {
  return {
    name: displayName(user),
    units: user.units,
    ...(user.acting ? { acting: { name: displayName(user.acting), canWrite: user.acting.canWrite } } : {}),
  };
}

export function sendHtml(ctx: Ctx, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = body;
}

/**
 * A 404 page: also the answer for another user's resource, so its existence is not revealed. Pass
 * the signed-in user, when there is one, so the header shows them rather than Sign in.
 */
export function notFound(ctx: Ctx, message = 'Not found', user?: Pick<User, 'first_name' | 'last_name'>): void {
  sendHtml(ctx, 404, errorPage(404, message, user ? { name: displayName(user) } : undefined));
}

/** A timestamp as `2026-05-18 15:32 UTC` in a <time> element; a dash when absent. */
export function when(date: Date | null | undefined, absent = 'never'): Html {
  if (!date) return html`<span class="muted">${absent}</span>`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace('T', ' ')} UTC</time>`;
}

export function notice(message: string | undefined): Html {
  return message ? html`<p class="notice" role="status">${message}</p>` : html``;
}

/** The notice for the first of `notices`' keys present in the query (`?saved=1` after a redirect), if any. */
export function queryNotice(ctx: Ctx, notices: Record<string, string>): string | undefined {
  const key = Object.keys(notices).find((k) => ctx.query[k] !== undefined);
  return key ? notices[key] : undefined;
}

/** `s` cut to `max` characters with an ellipsis, for quoting user input or a response in a message or cell. */
export function shorten(s: string, max = 80): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A labelled textarea, styled like an input; `error` and `hint` render below it. */
export function textareaField(f: {
  name: string;
  label: string;
  value?: string;
  error?: string | undefined;
  hint?: Html | string;
  rows?: number;
  placeholder?: string;
}): Html {
  const described = [f.error ? `${f.name}-error` : '', f.hint ? `${f.name}-hint` : ''].filter(Boolean).join(' ');
  return html`<label for="${f.name}">${f.label}</label>
<textarea id="${f.name}" name="${f.name}" rows="${f.rows ?? 3}"${f.placeholder ? html` placeholder="${f.placeholder}"` : ''}${f.error ? html` aria-invalid="true"` : ''}${described ? html` aria-describedby="${described}"` : ''}>${f.value ?? ''}</textarea>
${f.hint ? html`<p class="hint" id="${f.name}-hint">${f.hint}</p>` : ''}
${f.error ? html`<p class="field-error" id="${f.name}-error">${f.error}</p>` : ''}`;
}

/** A checkbox with its label on the same row. */
export function checkboxField(f: {
  name: string;
  label: string;
  checked: boolean;
  value?: string;
  id?: string;
  error?: string | undefined;
  hint?: Html | string;
}): Html {
  const id = f.id ?? f.name;
  return html`<div class="check">
<input type="checkbox" id="${id}" name="${f.name}" value="${f.value ?? 'on'}"${f.checked ? html` checked` : ''}${f.error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>
<label for="${id}">${f.label}</label>
</div>
${f.hint ? html`<p class="hint">${f.hint}</p>` : ''}
${f.error ? html`<p class="field-error" id="${id}-error">${f.error}</p>` : ''}`;
}

/** A hint paragraph for an input made with `field()`. */
export function hint(name: string, text: Html | string): Html {
  return html`<p class="hint" id="${name}-hint">${text}</p>`;
}

/** Pages beyond this are read as page 1: an offset this deep would only cost the database. */
const MAX_PAGE = 100_000;

/** A page number from 1 (from a query or form value); anything else is page 1. */
export function pageNumber(value: unknown): number {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) return 1;
  const n = Number(raw);
  return n >= 1 && n <= MAX_PAGE ? n : 1;
}

/** `UTC+02:00`: a recorded clock's offset. */
export function utcOffset(seconds: number): string {
  const sign = seconds < 0 ? '−' : '+';
  const abs = Math.abs(seconds);
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  return `UTC${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}
