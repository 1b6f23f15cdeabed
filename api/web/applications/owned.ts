import type { Ctx } from '../../http/context.ts';
import type { Application } from '../../../db/database.ts';
import { findOwnedApplication } from '../../../db/applications.ts';
import { assertSameOrigin } from '../../http/origin-check.ts';
import { notFound, requireWebUser, type WebUser } from '../web-common.ts';

/** The signed-in user and their application named in the path; undefined after answering (sign-in or 404). */
export async function ownedApplication(ctx: Ctx, opts: { post: boolean }): Promise<{ user: WebUser; app: Application } | undefined> {
  if (opts.post) assertSameOrigin(ctx);
  const id = ctx.params.id ?? '';
  const user = await requireWebUser(ctx, opts.post ? `/settings/applications/${encodeURIComponent(id)}` : ctx.path);
  if (!user) return undefined;
  const app = await findOwnedApplication(ctx.deps.db, id, user.id);
  if (!app) {
    notFound(ctx, 'Application not found.', user);
    return undefined;
  }
  return { user, app };
}
