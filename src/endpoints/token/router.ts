import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type Response,
  type Router,
} from 'express';
import { OAuthError, toOAuthError } from '../../errors/oauth-error.js';
import { eventContext, reportServerError } from '../../events/emit.js';
import { reportFailure } from '../../errors/report.js';
import { noStore } from '../../http/headers.js';
import { formParams, requiredParam } from '../../http/params.js';
import { requestId } from '../../http/request-id.js';
import { pathsUnder, scopedRouter } from '../../http/scoped-router.js';
import type { AuthorizationServer } from '../../server.js';
import { clientAuthentication, type ClientAuthLocals } from './client-auth.js';
import { grants, type GrantHandler } from './grants.js';

interface TokenLocals extends ClientAuthLocals {
  grant: GrantHandler;
}

/**
 * The token endpoint (RFC 6749 3.2): `POST /oauth/token` with an
 * `application/x-www-form-urlencoded` body, for the `authorization_code` and `refresh_token`
 * grants. Mount it at the path of `baseUrl`. Failed client authentications are rate limited
 * (`rateLimit`).
 *
 * @example
 * app.use(tokenRouter(server));
 *
 * @see RFC 6749 sections 4.1.3, 5.1, 5.2, 6
 */
export function tokenRouter(server: AuthorizationServer): Router {
  const router = scopedRouter(pathsUnder('/oauth/token'));
  router.use('/oauth/token', requestId);
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  router.post(
    '/oauth/token',
    noStore,
    requireForm,
    form,
    readTokenRequest,
    ...clientAuthentication(server),
    (_req, res) => exchange(server, _req, res),
  );
  router.all('/oauth/token', noStore, (_req, res) => {
    res.set('Allow', 'POST');
    throw new OAuthError('invalid_request', 'The token endpoint accepts POST only.');
  });
  router.use('/oauth/token', tokenErrors(server));
  return router;
}

/** RFC 6749 3.2: parameters travel as a form; JSON or other bodies are refused outright. */
function requireForm(req: Request, _res: Response, next: (err?: unknown) => void): void {
  if (!req.is('application/x-www-form-urlencoded')) {
    throw new OAuthError('invalid_request', 'The body must be application/x-www-form-urlencoded.');
  }
  if (req.originalUrl.includes('?')) {
    throw new OAuthError('invalid_request', 'Parameters belong in the body, not in the URL.');
  }
  next();
}

/** The parameters, strictly, and the grant they ask for; checked before the client is. */
function readTokenRequest(req: Request, res: Response, next: NextFunction): void {
  const locals = res.locals as TokenLocals;
  locals.params = formParams(req.body);
  const grantType = requiredParam(locals.params, 'grant_type');
  const grant = Object.hasOwn(grants, grantType) ? grants[grantType] : undefined;
  if (!grant)
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  locals.grant = grant;
  next();
}

async function exchange(server: AuthorizationServer, req: Request, res: Response): Promise<void> {
  const { grant, client, params } = res.locals as TokenLocals;
  res.status(200).json(await grant(server, client!, params, eventContext(req)));
}

/**
 * RFC 6749 5.2 JSON errors; internals are logged, never sent. A storage outage is 503
 * `temporarily_unavailable` with `Retry-After`.
 */
function tokenErrors(server: AuthorizationServer): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = toOAuthError(err);
    reportFailure(server, error, req, res);
    reportServerError(server, req, 'token', error);
    res.status(error.status).set(error.headers).json(error.toJSON());
  };
}
