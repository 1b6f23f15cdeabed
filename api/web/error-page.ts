import type { Ctx } from '../http/context.ts';
import { currentWebUser } from '../http/web-session.ts';
import { errorPage } from './layout.ts';
import { displayName } from './web-common.ts';

/**
 * An error as a page (what api/http/middleware/error-handler.ts answers a browser), with the signed-in
 * user's name and Sign out in its header when the request carries a valid session. The user is not
 * looked up when a dependency is down (the lookup would fail the same way); a failed lookup shows the
 * signed-out header.
 */
export async function renderErrorPage(ctx: Ctx, status: number, detail: string, dependencyDown: boolean): Promise<string> {
  return errorPage(status, detail, dependencyDown ? undefined : await pageUser(ctx));
}

async function pageUser(ctx: Ctx): Promise<{ name: string } | undefined> {
  try {
    const user = await currentWebUser(ctx);
    return user ? { name: displayName(user) } : undefined;
  } catch {
    return undefined;
  }
}
