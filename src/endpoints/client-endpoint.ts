import { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import { OAuthError, toOAuthError } from '../errors/oauth-error.js';
import { reportFailure } from '../errors/report.js';
import { reportServerError } from '../events/emit.js';
import type { ClientAuthenticationFailedEvent } from '../events/types.js';
import { formParser, readFormRequest } from '../http/form.js';
import { noStore } from '../http/headers.js';
import { requestId } from '../http/request-id.js';
import { pathsUnder, scopedRouter } from '../http/scoped-router.js';
import { formParams } from '../http/params.js';
import type { AuthorizationServer } from '../server.js';
import type { ClientRecord } from '../storage/types.js';
import { clientAuthenticator } from './token/client-auth.js';

/** `res.locals` of a client-authenticated endpoint, once its steps have run. */
export interface ClientEndpointLocals {
  /** The form parameters, strictly parsed: each at most once. */
  params: Map<string, string>;
  /** The authenticated client. */
  client: ClientRecord;
}

type Endpoint = ClientAuthenticationFailedEvent['endpoint'];

/**
 * A `POST` endpoint that authenticates clients exactly like the token endpoint (RFC 6749 2.3.1:
 * `client_secret` in the body or HTTP Basic), as a pipeline of steps: no-store headers, a bounded
 * form, strict parameters, client authentication, then `handle`. Other methods get
 * `invalid_request` with `Allow: POST`; errors are RFC 6749 5.2 JSON.
 */
export function clientAuthenticatedEndpoint(
  server: AuthorizationServer,
  path: string,
  endpoint: Endpoint,
  handle: (
    server: AuthorizationServer,
    locals: ClientEndpointLocals,
    req: Request,
    res: Response,
  ) => Promise<void>,
): Router {
  const router = scopedRouter(pathsUnder(path));
  const form = formParser('8kb', 10);
  // The token endpoint's client authentication, rate limit of failures included.
  const authenticate = clientAuthenticator(server, endpoint);
  router.post(path, async (req, res) => {
    await readFormRequest(form, req, res);
    const locals = res.locals as ClientEndpointLocals;
    locals.params = formParams(req.body);
    await authenticate(req, res);
    await handle(server, locals, req, res);
  });
  router.use(path, requestId);
  router.all(path, noStore, (_req, res) => {
    res.set('Allow', 'POST');
    throw new OAuthError('invalid_request', 'This endpoint accepts POST only.');
  });
  router.use(path, jsonErrors(server, endpoint));
  return router;
}

/** RFC 6749 5.2 JSON errors, as at the token endpoint; internals are logged, never sent. */
function jsonErrors(server: AuthorizationServer, endpoint: Endpoint): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = toOAuthError(err);
    reportFailure(server, error, req, res);
    reportServerError(server, req, endpoint, error);
    res.status(error.status).set(error.headers).json(error.toJSON());
  };
}
