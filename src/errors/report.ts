import type { Request, Response } from 'express';
import { requestIdOf } from '../http/request-id.js';
import type { AuthorizationServer } from '../server.js';
import type { OAuthError } from './oauth-error.js';

/**
 * Reports a 5xx answer once: to the logger (`error` for an unknown error, `warn` for an outage of
 * the storage or of a provider, which is not a bug) and then to the host's `onError` hook, with
 * the request id and the route. What is reported is the thrown error itself, never the request's
 * parameters, headers or body, so no token, code or secret reaches the logs.
 */
export function reportFailure(
  server: AuthorizationServer,
  error: OAuthError,
  req: Request,
  res: Response,
  status = error.status,
): void {
  if (status < 500) return;
  const requestId = requestIdOf(req, res);
  const route = `${req.method} ${req.originalUrl.split('?')[0]}`;
  const cause = error.cause ?? error;
  if (status === 500) {
    server.logger.error('internal error', { requestId, route, error: cause });
  } else {
    const what = status === 503 ? 'storage unavailable' : 'OpenID provider unreachable';
    server.logger.warn(what, { requestId, route, error: cause });
  }
  const hook = server.options.onError;
  if (hook === undefined) return;
  try {
    hook(cause, { requestId, route, status });
  } catch (hookError) {
    server.logger.error('the onError hook threw', { requestId, route, error: hookError });
  }
}
