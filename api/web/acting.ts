import type { Ctx } from '../http/context.ts';
import { assertSameOrigin } from '../http/origin-check.ts';
import { clearActingCookie, setActingCookie } from '../http/authenticate.ts';
import { HttpError } from '../services/errors.ts';
import { WEB_SESSION_SCOPES } from '../services/auth/scopes.ts';
import { issueDelegatedToken } from '../services/coaching/delegation.ts';
import { errorPage } from './layout.ts';
import { formBody } from './forms.ts';
import { deleteSessionDelegations } from '../../db/delegations.ts';
import { displayName, requireWebUser, sendHtml } from './web-common.ts';

/**
 * "Act as" in the web app (docs/coaching.md, "The web app"): a coach acts as an athlete of their team,
 * or a manager as a managed user. The session gets a delegated token like any other (the same rules
 * and checks: POST /api/v1/oauth/delegated-token's), made under the web session and kept in its own
 * HttpOnly cookie beside the session's; the data pages and their API calls are then the athlete's,
 * under a banner on every page, until "Back to your own account" or until the athlete's grant ends.
 */
export async function startActing(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/teams');
  if (!user) return;
  const form = formBody(ctx);
  const sub = form.user_id ?? '';
  const teamId = form.team_id || undefined;
  try {
    const delegated = await issueDelegatedToken(
      ctx.deps,
      { userId: user.id, scopes: WEB_SESSION_SCOPES, clientId: undefined, grantId: undefined, sessionId: user.sessionId },
      { sub, team_id: teamId },
    );
    setActingCookie(ctx, delegated.access_token);
  } catch (err) {
    if (!(err instanceof HttpError) || err.status !== 403) throw err;
    sendHtml(ctx, 403, errorPage(403, 'You may not act as this user.', { name: displayName(user) }));
    return;
  }
  ctx.status = 303;
  ctx.redirect('/activities');
}

/** Back to one's own account: the cookie cleared and the session's delegations ended. */
export async function stopActing(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/');
  if (!user) return;
  await deleteSessionDelegations(ctx.deps.db, user.sessionId, user.id);
  clearActingCookie(ctx);
  ctx.status = 303;
  ctx.redirect('/settings/teams');
}
