import type { Router } from '@koa/router';
import type { AppContextExtras, AppState } from '../http/context.ts';
import { showSignIn, showSignUp, signOut, submitSignIn, submitSignUp } from './accounts.ts';
import { decide } from './authorize.ts';
import { changePassword, saveName, saveUnits, showSettings } from './settings.ts';
import {
  createApplicationFromForm,
  createSecret,
  deleteApplicationFromForm,
  revokeSecret,
  saveApplication,
  sendTestEvent,
  showApplication,
  showApplications,
} from './applications/index.ts';
import { createToken, revokeToken, showTokens } from './tokens.ts';
import { addThresholdFromForm, deleteThresholdFromForm, showThresholds } from './thresholds.ts';
import { revokeConnection, showConnections } from './connections.ts';
import { clientSidePrivacy, redirectToPage, showApplicationPage, showDirectory } from './directory.ts';
import { deleteActivityFromForm, showActivities, showActivity } from './activities.ts';
import {
  createTeamFromForm,
  joinFromPage,
  joinTeamFromForm,
  revokeTeamFromForm,
  shareWithTeamFromForm,
  showJoinPage,
  showTeams,
} from './teams.ts';
import {
  createInvitationFromForm,
  deleteTeamFromForm,
  removeMemberFromForm,
  renameTeamFromForm,
  revokeInvitationFromForm,
  showTeam,
} from './team-page.ts';
import { startActing, stopActing } from './acting.ts';
import { createManagedUserFromForm, deleteManagedUserFromForm, renameManagedUserFromForm, showManagedUsers } from './managed-users.ts';
import { deleteDailyFromForm, deleteTraceFromForm, showData } from './data.ts';
import { createTestFromForm, deleteTestFromForm, showTest, showTests } from './tests.ts';
import { showUpload } from './upload.ts';
import { showCurves } from './curves.ts';
import { home } from './home.ts';

/**
 * The web pages and their forms, by path: what a reader looks up to find a page's module. Server-
 * rendered, same-origin only (their forms check the Origin, api/http/origin-check.ts); the API's
 * operations are registered from their specs in api/app.ts (GET /oauth/authorize among them).
 */
export function addWebPages(router: Router<AppState, AppContextExtras>): void {
  router.get('/', home);
  router.get('/signup', showSignUp);
  router.post('/signup', submitSignUp);
  router.get('/signin', showSignIn);
  router.post('/signin', submitSignIn);
  router.post('/signout', signOut);
  router.post('/oauth/authorize/decision', decide);
  router.get('/settings', showSettings);
  router.post('/settings/profile', saveName);
  router.post('/settings/units', saveUnits);
  router.post('/settings/password', changePassword);
  router.get('/settings/applications', showApplications);
  router.post('/settings/applications', createApplicationFromForm);
  router.get('/settings/applications/:id', showApplication);
  router.post('/settings/applications/:id', saveApplication);
  router.post('/settings/applications/:id/secrets', createSecret);
  router.post('/settings/applications/:id/secrets/:secretId/revoke', revokeSecret);
  router.post('/settings/applications/:id/delete', deleteApplicationFromForm);
  router.post('/settings/applications/:id/webhooks/test', sendTestEvent);
  router.get('/settings/thresholds', showThresholds);
  router.post('/settings/thresholds', addThresholdFromForm);
  router.post('/settings/thresholds/delete', deleteThresholdFromForm);
  router.get('/settings/tokens', showTokens);
  router.post('/settings/tokens', createToken);
  router.post('/settings/tokens/:id/revoke', revokeToken);
  router.get('/settings/connections', showConnections);
  router.post('/settings/connections/:id/revoke', revokeConnection);
  router.get('/settings/teams', showTeams);
  router.post('/settings/teams', createTeamFromForm);
  router.post('/settings/teams/join', joinTeamFromForm);
  router.post('/settings/teams/share', shareWithTeamFromForm);
  router.post('/settings/teams/:id/revoke', revokeTeamFromForm);
  router.get('/settings/managed-users', showManagedUsers);
  router.post('/settings/managed-users', createManagedUserFromForm);
  router.post('/settings/managed-users/:id', renameManagedUserFromForm);
  router.post('/settings/managed-users/:id/delete', deleteManagedUserFromForm);
  router.post('/act-as', startActing);
  router.post('/act-as/stop', stopActing);
  router.get('/teams/join/:secret', showJoinPage);
  router.post('/teams/join/:secret', joinFromPage);
  router.get('/teams/:id', showTeam);
  router.post('/teams/:id/invitations', createInvitationFromForm);
  router.post('/teams/:id/invitations/:invitation/revoke', revokeInvitationFromForm);
  router.post('/teams/:id/members/:user/remove', removeMemberFromForm);
  router.post('/teams/:id/rename', renameTeamFromForm);
  router.post('/teams/:id/delete', deleteTeamFromForm);
  router.get('/upload', showUpload);
  router.get('/activities', showActivities);
  router.get('/activities/:id', showActivity);
  router.post('/activities/:id/delete', deleteActivityFromForm);
  router.get('/curves', showCurves);
  router.get('/data', showData);
  router.post('/data/traces/:id/delete', deleteTraceFromForm);
  router.post('/data/dailies/:measure/:date/delete', deleteDailyFromForm);
  router.get('/tests', showTests);
  router.post('/tests', createTestFromForm);
  router.get('/tests/:id', showTest);
  router.post('/tests/:id/delete', deleteTestFromForm);
  router.get('/apps', showDirectory);
  router.get('/pages/:slug/', showApplicationPage);
  router.get('/pages/:slug', redirectToPage);
  router.get('/privacy/client-side', clientSidePrivacy);
}
