import { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import { OAuthError, toOAuthError } from '../../errors/oauth-error.js';
import { eventContext, reportServerError } from '../../events/emit.js';
import { reportFailure } from '../../errors/report.js';
import { formParser, readFormRequest } from '../../http/form.js';
import { noStore } from '../../http/headers.js';
import { sendJson } from '../../http/json.js';
import { formParams, requiredParam } from '../../http/params.js';
import { requestId } from '../../http/request-id.js';
import { pathsUnder, scopedRouter } from '../../http/scoped-router.js';
import type { AuthorizationServer } from '../../server.js';
import type { ClientRecord } from '../../storage/types.js';
import { clientAuthenticator, type ClientAuthLocals } from './client-auth.js';
import { grants } from './grants.js';

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
  const form = formParser('8kb', 20);
  const authenticate = clientAuthenticator(server);
  const errors = tokenErrors(server);
  const tokenRequest = async (req: Request, res: Response) => {
    await readFormRequest(form, req, res);
    await exchange(server, authenticate, req, res);
  };
  // POST /oauth/token runs without a walk of the router's stack; the same step as a route serves
  // the requests the direct route leaves to the stack (an absolute-form request target).
  const router = scopedRouter(pathsUnder('/oauth/token'), {
    method: 'POST',
    path: '/oauth/token',
    errors,
    handle: tokenRequest,
  });
  router.post('/oauth/token', tokenRequest);
  router.use('/oauth/token', requestId);
  router.all('/oauth/token', noStore, (_req, res) => {
    res.set('Allow', 'POST');
    throw new OAuthError('invalid_request', 'The token endpoint accepts POST only.');
  });
  router.use('/oauth/token', errors);
  return router;
}

/**
 * Reads the parameters, strictly, and the grant they ask for (checked before the client is),
 * authenticates the client (rate limit included), then answers with the grant's tokens.
 */
async function exchange(
  server: AuthorizationServer,
  authenticate: (req: Request, res: Response) => Promise<ClientRecord>,
  req: Request,
  res: Response,
): Promise<void> {
  const locals = res.locals as ClientAuthLocals;
  const params = (locals.params = formParams(req.body));
  const grantType = requiredParam(params, 'grant_type');
  const grant = Object.hasOwn(grants, grantType) ? grants[grantType] : undefined;
  if (!grant)
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  const client = await authenticate(req, res);
  sendJson(res, 200, await grant(server, client, params, () => eventContext(req)));
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
