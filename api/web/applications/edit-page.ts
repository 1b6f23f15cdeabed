import type { Ctx } from '../../http/context.ts';
import type { Application } from '../../../db/database.ts';
import { listClientSecrets } from '../../../db/applications.ts';
import { deliveryLog } from '../../../db/events.ts';
import type { WebUser } from '../web-common.ts';
import { editView, type EditState } from './views/edit.ts';
import { DELIVERY_LOG_LIMIT } from './views/webhooks.ts';

/** The edit page of `app` with its client secrets and delivery log: every action on the application answers with it. */
export async function editPage(ctx: Ctx, user: WebUser, app: Application, s: EditState = {}): Promise<string> {
  const { config, db } = ctx.deps;
  const [secrets, deliveries] = await Promise.all([listClientSecrets(db, app.id), deliveryLog(db, app.id, DELIVERY_LOG_LIMIT)]);
  return editView(config, user, app, { secrets, deliveries }, s);
}
