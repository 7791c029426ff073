import express, { type Request, type Response, type Router } from 'express';
import { authorizedApplications, revokeApplication } from '../applications/authorized.js';
import { generateSecret, safeEqual } from '../crypto/secrets.js';
import { OAuthError } from '../errors/oauth-error.js';
import { pageHeaders } from '../http/headers.js';
import { refuseHead } from '../http/head.js';
import { requestId } from '../http/request-id.js';
import { pathsUnder, scopedRouter } from '../http/scoped-router.js';
import { saveSessionFirst } from '../session/save-first.js';
import { formParams } from '../http/params.js';
import type { AuthorizationServer } from '../server.js';
import { readSessionState, writableSessionState } from '../session/state.js';
import { checkSameOrigin } from './authorize/decision.js';
import { authorizeErrors } from './authorize/errors.js';
import { loginUrl } from './authorize/login.js';
import { signOutForm } from './authorize/logout.js';

/**
 * The end user's authorized-applications page: the applications they trust, when each was
 * authorized and last used, and a revoke button for each. Revoking deletes the remembered consent
 * and revokes the application's tokens for this user at once. A visitor who is not signed in
 * chooses a provider and signs in first.
 *
 * Routes: `GET /oauth/applications`, `POST /oauth/applications/revoke`. Mount it at the path of
 * `baseUrl`, like `authorizeRouter`; link to it from your app's account settings.
 *
 * @example
 * app.use(applicationsRouter(server));
 */
export function applicationsRouter(server: AuthorizationServer): Router {
  const router = scopedRouter(pathsUnder('/oauth/applications'));
  const form = express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 });
  const session = [server.session, saveSessionFirst(server)] as const;
  router.use('/oauth/applications', requestId, refuseHead);
  router.get('/oauth/applications', pageHeaders, ...session, (req, res) => showPage(server, req, res));
  router.post('/oauth/applications/revoke', pageHeaders, ...session, form, (req, res) =>
    revoke(server, req, res),
  );
  router.use('/oauth/applications', authorizeErrors(server));
  return router;
}

async function showPage(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  const { user } = readSessionState(req);
  if (!user) {
    // Nothing is stored for a visitor who only looks: the login link says what the sign-in is for.
    res.type('html').send(
      server.pages.selection({
        applicationName: 'your authorized applications',
        providers: server.options.providers.map((p) => ({
          name: p.name,
          loginUrl: loginUrl(server, p.identifier, 'applications'),
        })),
      }),
    );
    return;
  }
  const state = writableSessionState(req, server.clock());
  state.applicationsCsrf ??= generateSecret();
  const revokedId = typeof req.query.revoked === 'string' ? req.query.revoked : undefined;
  const applications = await authorizedApplications(server, user.id);
  const revoked =
    revokedId === undefined ? undefined : (await server.storage.clients.find(revokedId))?.applicationName;
  res.type('html').send(
    server.pages.applications({
      signedInAs: user.identifier,
      applications,
      revokeAction: `${server.urls.base}/oauth/applications/revoke`,
      csrf: state.applicationsCsrf,
      signOut: signOutForm(server, req, 'done'),
      ...(revoked === undefined ? {} : { revoked }),
    }),
  );
}

async function revoke(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  checkSameOrigin(server, req, 'The revoke form was submitted from another site.');
  const expired = new OAuthError(
    'invalid_request',
    'This page has expired. Open your authorized applications again.',
    {
      redirectable: false,
    },
  );
  const state = readSessionState(req);
  const fields = formParams(req.body);
  const clientId = fields.get('client_id');
  if (!state.user || !state.applicationsCsrf || !clientId) throw expired;
  if (!safeEqual(fields.get('csrf') ?? '', state.applicationsCsrf)) throw expired;
  await revokeApplication(server, state.user.id, clientId, req);
  // 303: the browser follows with a GET, so reloading the list never posts again.
  res.redirect(303, `${server.urls.base}/oauth/applications?${new URLSearchParams({ revoked: clientId })}`);
}
