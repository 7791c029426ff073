import {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type Response,
  type Router,
} from 'express';
import { OAuthError, toOAuthError } from '../../errors/oauth-error.js';
import { eventContext, reportServerError } from '../../events/emit.js';
import { reportFailure } from '../../errors/report.js';
import { checkForm, formParser, parseBody, requireForm } from '../../http/form.js';
import { noStore, setNoStore } from '../../http/headers.js';
import { sendJson } from '../../http/json.js';
import { formParams, requiredParam } from '../../http/params.js';
import { requestId, requestIdOf } from '../../http/request-id.js';
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
  // POST /oauth/token itself runs without a walk of the router's stack: the same steps as the
  // route below, which serves the rest (HEAD, other spellings of the path).
  const router = scopedRouter(pathsUnder('/oauth/token'), {
    method: 'POST',
    path: '/oauth/token',
    errors,
    async handle(req, res) {
      requestIdOf(req, res);
      setNoStore(res);
      checkForm(req);
      await parseBody(form, req, res);
      await exchange(server, authenticate, req, res);
    },
  });
  // Three steps: the synchronous checks of the request (its id first), the body parser, then one
  // async step. Before the `use` of `requestId`, which gives every other request its id.
  router.post('/oauth/token', tokenRequest, form, (req, res) => exchange(server, authenticate, req, res));
  router.use('/oauth/token', requestId);
  router.all('/oauth/token', noStore, (_req, res) => {
    res.set('Allow', 'POST');
    throw new OAuthError('invalid_request', 'The token endpoint accepts POST only.');
  });
  router.use('/oauth/token', errors);
  return router;
}

/** The request's id, no-store headers (RFC 6749 5.1), then only a form body (RFC 6749 3.2). */
function tokenRequest(req: Request, res: Response, next: NextFunction): void {
  requestIdOf(req, res);
  setNoStore(res);
  requireForm(req, res, next);
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
