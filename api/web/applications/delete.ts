// POST /settings/applications/:id/delete.
import type { Ctx } from '../../http/context.ts';
import { deleteApplication } from '../../../db/applications.ts';
import { ownedApplication } from './owned.ts';

export async function deleteApplicationFromForm(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  // FK cascades remove its secrets, consents, grants and codes.
  await deleteApplication(ctx.deps.db, found.app.id);
  ctx.status = 303;
  ctx.redirect('/settings/applications?deleted=1');
}
