// POST /settings/applications/:id/secrets and …/secrets/:secretId/revoke: client secrets.
import { z } from 'zod';
import type { Ctx } from '../../http/context.ts';
import { createClientSecret, deleteClientSecret } from '../../../db/applications.ts';
import { fieldErrors, formBody, storable } from '../forms.ts';
import { notFound, sendHtml } from '../web-common.ts';
import { ownedApplication } from './owned.ts';
import { editPage } from './edit-page.ts';

const SecretForm = z.object({
  label: z
    .string()
    .default('')
    .transform((v) => v.trim())
    .refine((v) => v.length >= 1, 'Label is required.')
    .refine((v) => v.length <= 100, 'Label must be at most 100 characters.'),
});

export async function createSecret(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  const { user, app } = found;
  const values = formBody(ctx);
  const parsed = storable(SecretForm).safeParse(values);
  if (!parsed.success) {
    sendHtml(ctx, 422, await editPage(ctx, user, app, { secretValues: values, secretErrors: fieldErrors(parsed.error) }));
    return;
  }
  const { secret } = await createClientSecret(ctx.deps.db, app.id, parsed.data.label);
  // Rendered here rather than after a redirect, so the secret never appears in a URL or a later page.
  ctx.set('Cache-Control', 'no-store');
  sendHtml(ctx, 201, await editPage(ctx, user, app, { newSecret: { label: parsed.data.label, secret } }));
}

export async function revokeSecret(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  if (!(await deleteClientSecret(ctx.deps.db, found.app.id, ctx.params.secretId ?? '')))
    return notFound(ctx, 'Secret not found.', found.user);
  ctx.status = 303;
  ctx.redirect(`/settings/applications/${found.app.id}?secret_revoked=1`);
}
