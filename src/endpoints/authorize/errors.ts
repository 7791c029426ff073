import type { ErrorRequestHandler } from 'express';
import { toOAuthError } from '../../errors/oauth-error.js';
import { reportServerError } from '../../events/emit.js';
import type { AuthorizationServer } from '../../server.js';
import { LoginFailed } from './login.js';
import { redirectError, type AuthorizeLocals } from './redirect.js';

const TITLES: Record<string, string> = {
  invalid_request: 'This request cannot be processed',
  access_denied: 'Sign-in did not complete',
  server_error: 'Something went wrong',
  temporarily_unavailable: 'Temporarily unavailable',
};

/**
 * Renders authorization-endpoint errors: to the client's verified redirect URI when the error may
 * be redirected (RFC 6749 4.1.2.1), otherwise as a page. Internals are logged, never shown.
 */
export function authorizeErrors(server: AuthorizationServer): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const error = toOAuthError(err);
    if (error.code === 'server_error' || error.cause !== undefined) {
      server.logger.error('authorization endpoint error', { error: error.cause ?? error });
    }
    reportServerError(server, req, 'authorization', error);
    const target = (res.locals as AuthorizeLocals).redirectTarget;
    if (error.redirectable && target) return redirectError(res, target, error);
    res
      // A failed login is the user's request that could not be completed, not a refusal (403).
      .status(err instanceof LoginFailed ? 400 : error.status)
      .set(error.headers)
      .type('html')
      .send(
        server.pages.error({
          status: error.status,
          title: TITLES[error.code] ?? 'This request cannot be processed',
          message: error.description,
          ...(err instanceof LoginFailed ? { retryUrl: `${server.urls.authorization}/resume` } : {}),
        }),
      );
  };
}
