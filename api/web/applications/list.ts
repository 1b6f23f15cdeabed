// GET and POST /settings/applications: the user's applications, and creating one.
import type { Ctx } from '../../http/context.ts';
import { createApplication, listOwnedApplications, SlugTakenError, updateApplication } from '../../../db/applications.ts';
import { assertSameOrigin } from '../../http/origin-check.ts';
import { registeredRedirectUris } from '../../services/applications/model.ts';
import { formBody } from '../forms.ts';
import { queryNotice, requireWebUser, sendHtml } from '../web-common.ts';
import { validateApplication } from './form.ts';
import { listPage } from './views/list.ts';

const LIST_NOTICES: Record<string, string> = { deleted: 'The application was deleted.' };

export async function showApplications(ctx: Ctx) {
  const user = await requireWebUser(ctx);
  if (!user) return;
  const apps = await listOwnedApplications(ctx.deps.db, user.id);
  sendHtml(ctx, 200, listPage(ctx.deps.config, user, apps, { notice: queryNotice(ctx, LIST_NOTICES) }));
}

export async function createApplicationFromForm(ctx: Ctx) {
  assertSameOrigin(ctx);
  const user = await requireWebUser(ctx, '/settings/applications');
  if (!user) return;
  const { db, config } = ctx.deps;
  const values = formBody(ctx);
  const { input, errors } = validateApplication(values, config);
  if (input) {
    try {
      const app = await db.transaction().execute(async (tx) => {
        const created = await createApplication(tx, {
          owner_id: user.id,
          name: input.name,
          description: input.description,
          url: input.url,
          image: input.image,
          privacy_statement: input.privacy_statement,
          redirect_uris: registeredRedirectUris(config, input.redirect_uris, input.page_slug),
          page_slug: input.page_slug,
        });
        return input.published ? updateApplication(tx, created.id, { published: true }) : created;
      });
      ctx.status = 303;
      ctx.redirect(`/settings/applications/${app.id}?created=1`);
      return;
    } catch (err) {
      if (!(err instanceof SlugTakenError)) throw err;
      errors.page_slug = 'This page slug belongs to another application.';
    }
  }
  const apps = await listOwnedApplications(db, user.id);
  sendHtml(ctx, 422, listPage(config, user, apps, { values, errors }));
}
