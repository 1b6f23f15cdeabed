// GET and POST /settings/applications/:id: the edit page, and saving its Settings form (edit, publish,
// page slug, webhook endpoints, a new webhook secret).
import type { Ctx } from '../../http/context.ts';
import { SlugTakenError, updateApplication, type ApplicationChanges, webhookSecretContext } from '../../../db/applications.ts';
import { newSecret, SECRET_PREFIX } from '../../../lib/secrets.ts';
import { pageUrl, registeredRedirectUris } from '../../services/applications/model.ts';
import { formBody } from '../forms.ts';
import { queryNotice, sendHtml } from '../web-common.ts';
import { validateApplication } from './form.ts';
import { ownedApplication } from './owned.ts';
import { editPage } from './edit-page.ts';
import { testSentNotice } from './webhooks.ts';

const EDIT_NOTICES: Record<string, string> = {
  created: 'Application created.',
  saved: 'Saved.',
  secret_revoked: 'The secret was revoked.',
};

export async function showApplication(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: false });
  if (!found) return;
  sendHtml(
    ctx,
    200,
    await editPage(ctx, found.user, found.app, { notice: queryNotice(ctx, EDIT_NOTICES), webhookNotice: testSentNotice(ctx) }),
  );
}

export async function saveApplication(ctx: Ctx) {
  const found = await ownedApplication(ctx, { post: true });
  if (!found) return;
  const { user, app } = found;
  const { db, config } = ctx.deps;
  const values = formBody(ctx);
  const { input, errors } = validateApplication(values, config);
  if (input) {
    // The old page URL goes with the old slug; the new one is added.
    const oldPage = app.page_slug && app.page_slug !== input.page_slug ? pageUrl(config, app.page_slug) : undefined;
    const given = input.redirect_uris.filter((u) => u !== oldPage);
    const webhookSecret = input.new_webhook_secret ? newSecret(SECRET_PREFIX.webhookSecret) : undefined;
    const changes: ApplicationChanges = {
      name: input.name,
      description: input.description,
      url: input.url,
      image: input.image,
      privacy_statement: input.privacy_statement,
      redirect_uris: registeredRedirectUris(config, given, input.page_slug),
      published: input.published,
      page_slug: input.page_slug,
      webhook_endpoints: input.webhook_endpoints,
      ...(webhookSecret ? { webhook_secret: ctx.deps.box.seal(webhookSecret, webhookSecretContext(app.id)) } : {}),
    };
    try {
      const updated = await updateApplication(db, app.id, changes);
      if (webhookSecret) {
        // Shown once, on this page: never put in a URL or shown again.
        ctx.set('Cache-Control', 'no-store');
        sendHtml(ctx, 200, await editPage(ctx, user, updated, { notice: 'Saved.', newWebhookSecret: webhookSecret }));
        return;
      }
      ctx.status = 303;
      ctx.redirect(`/settings/applications/${app.id}?saved=1`);
      return;
    } catch (err) {
      if (!(err instanceof SlugTakenError)) throw err;
      errors.page_slug = 'This page slug belongs to another application.';
    }
  }
  sendHtml(ctx, 422, await editPage(ctx, user, app, { values, errors }));
}
