// Settings → API applications (/settings/applications…): the handlers api/app.ts mounts.
// One module per page or action; the HTML is in views/, the form rules in form.ts.
export { showApplications, createApplicationFromForm } from './list.ts';
export { showApplication, saveApplication } from './edit.ts';
export { createSecret, revokeSecret } from './secrets.ts';
export { sendTestEvent } from './webhooks.ts';
export { deleteApplicationFromForm } from './delete.ts';
