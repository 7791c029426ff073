import { authorizedApplications, revokeApplication } from './list.js';
import { generateSecret, safeEqual } from '../../crypto/secrets.js';
import { OAuthError } from '../../errors/oauth-error.js';
import { page, redirect } from '../../http/answer.js';
import { readPageForm, type FormContext } from '../shared/form.js';
import { endpoint, type Context } from '../shared/pipeline.js';
import { sameOrigin } from '../shared/same-origin.js';
import { identifyUser } from '../shared/identify.js';
import { loadSession } from '../shared/load-session.js';
import { pictureOf } from '../../session/state.js';
import { providerChoices, signOutForm } from '../shared/login-links.js';

/**
 * `GET /oauth/applications`: the end user's authorized applications, when each was authorized,
 * and a revoke button for each. A visitor who is not signed in chooses a provider first; nothing
 * is stored for a visitor who only looks.
 */
export const applicationsEndpoint = endpoint<Context>({
  name: 'applications',
  method: 'GET',
  path: '/oauth/applications',
  kind: 'page',
  steps: [loadSession, identifyUser, showApplications],
});

/**
 * `POST /oauth/applications/revoke`: revokes the user's consent to one application, with every
 * token issued under it, then shows the list again (post/redirect/get) with a one-time notice.
 */
export const revokeApplicationEndpoint = endpoint<FormContext>({
  name: 'applications_revoke',
  method: 'POST',
  path: '/oauth/applications/revoke',
  kind: 'page',
  steps: [
    sameOrigin('The revoke form was submitted from another site.'),
    readPageForm('2kb', 5),
    loadSession,
    identifyUser,
    revoke,
  ],
});

async function showApplications(ctx: Context): Promise<void> {
  const { server } = ctx;
  const session = ctx.session!;
  const { user } = ctx;
  const { applicationsCsrf, notice } = session.state;
  if (!user) {
    ctx.answer = page(
      server.pages.selection({
        applicationName: 'your authorized applications',
        providers: providerChoices(server, 'applications'),
      }),
    );
    return;
  }
  const csrf = applicationsCsrf ?? (session.write().applicationsCsrf = generateSecret());
  // The notice of the revocation just made, shown once.
  if (notice !== undefined) delete session.write().notice;
  const applications = await authorizedApplications(server, user.id);
  ctx.answer = page(
    server.pages.applications({
      signedInAs: user.displayName ?? user.identifier,
      ...pictureOf(user),
      applications,
      revokeAction: server.urls.applicationsRevoke,
      csrf,
      ...(user.viaHost ? {} : { signOut: signOutForm(ctx, 'done') }),
      ...(notice === undefined ? {} : { revoked: notice.revoked }),
    }),
  );
}

async function revoke(ctx: FormContext): Promise<void> {
  const { server, params } = ctx;
  const session = ctx.session!;
  const { user } = ctx;
  const { applicationsCsrf } = session.state;
  const clientId = params.get('client_id');
  if (!user || !applicationsCsrf || !clientId || !safeEqual(params.get('csrf') ?? '', applicationsCsrf)) {
    throw new OAuthError(
      'invalid_request',
      'This page has expired. Open your authorized applications again.',
      {
        redirectable: false,
      },
    );
  }
  if (await revokeApplication(server, user.id, clientId, ctx.req)) {
    const client = await server.storage.clients.find(clientId);
    session.write().notice = { revoked: client?.applicationName ?? clientId };
  }
  ctx.answer = redirect(server.urls.applications, 303);
}
