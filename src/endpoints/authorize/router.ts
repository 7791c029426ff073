import express, { type Request, type Response, type Router } from 'express';
import { OAuthError } from '../../errors/oauth-error.js';
import { pageHeaders, setPageHeaders } from '../../http/headers.js';
import { refuseHead } from '../../http/head.js';
import { requestId, requestIdOf } from '../../http/request-id.js';
import { pathsUnder, scopedRouter } from '../../http/scoped-router.js';
import type { AuthorizationServer, ConfiguredProvider } from '../../server.js';
import type { ClientRecord } from '../../storage/types.js';
import { saveSessionFirst } from '../../session/save-first.js';
import { expired } from '../../session/login-session.js';
import { readSessionState, writableSessionState } from '../../session/state.js';
import { scopesCover } from '../../scopes/scopes.js';
import { standingGrant } from '../../grants/grant.js';
import { consentOrComplete, issueAndRedirect } from './complete.js';
import { decide } from './decision.js';
import { authorizeErrors } from './errors.js';
import { finishLogin, loginUrl, startLogin } from './login.js';
import { logout } from './logout.js';
import { parseAuthorizationRequest, type AuthorizationRequest } from './request.js';

/**
 * The authorization endpoint (RFC 6749 3.1) and the browser pages around it: provider selection,
 * OpenID 2.0 login, consent. Mount it at the path of `baseUrl`.
 *
 * Routes: `GET /oauth/authorize`, `GET /oauth/authorize/resume`, `POST /oauth/authorize/decision`,
 * `GET /oauth/login`, `GET /oauth/login/callback`.
 *
 * @example
 * app.use(authorizeRouter(server));
 *
 * @see RFC 6749 sections 4.1.1, 4.1.2, 4.2.1, 4.2.2
 */
export function authorizeRouter(server: AuthorizationServer): Router {
  const errors = authorizeErrors(server);
  // The busiest case runs without a walk of the router's stack, in one step with its request id
  // and page headers: a logged-in user who already trusts the client. Every other request of
  // GET /oauth/authorize goes on to the route below.
  const router = scopedRouter(pathsUnder('/oauth/authorize', '/oauth/login', '/oauth/logout'), {
    method: 'GET',
    path: '/oauth/authorize',
    errors,
    handle(req, res, next) {
      if (req.method === 'HEAD') return refuseHead(req, res, next);
      requestIdOf(req, res);
      setPageHeaders(res);
      return authorizeAtOnce(server, req, res, next);
    },
  });
  router.use(['/oauth/authorize', '/oauth/login', '/oauth/logout'], requestId, refuseHead);
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 10 });
  const session = [server.session, saveSessionFirst(server)] as const;
  const step = (handler: (server: AuthorizationServer, req: Request, res: Response) => Promise<void>) =>
    [pageHeaders, ...session, (req: Request, res: Response) => handler(server, req, res)] as const;

  router.get('/oauth/authorize', ...step(authorize));
  router.get('/oauth/authorize/resume', ...step(resume));
  router.post('/oauth/authorize/decision', pageHeaders, ...session, form, (req, res) =>
    decide(server, req, res),
  );
  router.get('/oauth/login', ...step(startLogin));
  router.get('/oauth/login/callback', ...step(finishLogin));
  router.post('/oauth/logout', pageHeaders, ...session, form, (req, res) => logout(server, req, res));
  router.use(['/oauth/authorize', '/oauth/login', '/oauth/logout'], errors);
  return router;
}

/** `GET /oauth/authorize`: validate, remember the request, then login, consent or redirect. */
async function authorize(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  const request = await parseAuthorizationRequest(server, req, res);
  const state = writableSessionState(req, server.clock());
  state.pending = request.pending;
  delete state.csrf;
  return proceed(server, req, res, request.provider, request.client);
}

/**
 * The most frequent authorization request, answered without express-session: the user is logged
 * in, nothing else is in progress in the session, and the user already trusts the client with
 * these scopes. The session is only read (and its expiry slid, as express-session would), so the
 * answer is the one {@link authorize} would give. Every other case, invalid requests included,
 * goes on to {@link authorize}, which reports it.
 */
async function authorizeAtOnce(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  next: () => void,
): Promise<void> {
  const session = await server.peekSession(req);
  const { user, pending, csrf } = session?.state ?? {};
  // A pending request or consent form would be cleared by this request: a change of the session.
  if (user === undefined || pending !== undefined || csrf !== undefined) return next();
  // A session past its absolute lifetime is replaced by the full path.
  if (expired(session!.state, server.clock(), server.options.session.absoluteMaxAge * 1000)) return next();
  let request: AuthorizationRequest;
  try {
    request = await parseAuthorizationRequest(server, req, res);
  } catch {
    return next();
  }
  if (request.provider && user.provider !== request.provider.name) return next();
  const grant = await standingGrant(server, user.id, request.client.clientId);
  if (!grant || !scopesCover(grant.scopes, request.pending.scopes)) return next();
  await session!.touch();
  return issueAndRedirect(server, req, res, user, request.pending, grant);
}

/** `GET /oauth/authorize/resume`: continue the pending request (after a failed login, say). */
function resume(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  return proceed(server, req, res, undefined, undefined);
}

/**
 * A user already logged in (at the requested provider, if one is named) goes on to consent; the
 * others log in at the named provider or choose one on the selection page. `client` is passed
 * when the caller has just read it, so the hot path reads it once.
 */
async function proceed(
  server: AuthorizationServer,
  req: Request,
  res: Response,
  provider: ConfiguredProvider | undefined,
  client: ClientRecord | undefined,
): Promise<void> {
  const { pending, user } = readSessionState(req);
  if (!pending) {
    throw new OAuthError('invalid_request', 'There is no sign-in in progress in this browser.', {
      redirectable: false,
    });
  }
  if (user && (!provider || user.provider === provider.name)) {
    return consentOrComplete(server, req, res, user, pending, client);
  }
  if (provider) return res.redirect(302, loginUrl(server, provider.identifier));
  const shown = client ?? (await server.storage.clients.find(pending.clientId));
  res.type('html').send(
    server.pages.selection({
      applicationName: shown?.applicationName ?? pending.clientId,
      providers: server.options.providers.map((p) => ({
        name: p.name,
        loginUrl: loginUrl(server, p.identifier),
      })),
    }),
  );
}
