import type { ErrorRequestHandler, Request } from 'express';
import { toOAuthError, type OAuthError } from '../../errors/oauth-error.js';
import { reportFailure } from '../../errors/report.js';
import type { ErrorPageData } from '../../pages/types.js';
import { reportServerError } from '../../events/emit.js';
import type { AuthorizationServer } from '../../server.js';
import { LoginFailed, loginUrl, ProviderUnreachable } from './login.js';
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
    reportServerError(server, req, 'authorization', error);
    const target = (res.locals as AuthorizeLocals).redirectTarget;
    const page = error.redirectable && target ? undefined : pageFor(server, req, error);
    const status = page?.status ?? error.status;
    if (status >= 500) reportFailure(server, error, req, res, status);
    else if (error.cause !== undefined) {
      server.logger.error('authorization endpoint error', { error: error.cause });
    }
    if (page === undefined) return redirectError(res, target!, error);
    res.status(page.status).set(error.headers).type('html').send(server.pages.error(page));
  };
}

function pageFor(server: AuthorizationServer, req: Request, error: OAuthError): ErrorPageData {
  const resume = `${server.urls.authorization}/resume`;
  const others = server.options.providers.length > 1 ? { otherProviderUrl: resume } : {};
  if (error instanceof ProviderUnreachable) {
    return {
      status: error.pageStatus,
      title: 'Your OpenID provider is not answering',
      message: `${error.description} It may be down or slow. Try again in a moment${others.otherProviderUrl ? ', or choose another provider' : ''}.`,
      retryUrl: error.provider === undefined ? resume : loginUrl(server, error.provider),
      ...others,
    };
  }
  if (error instanceof LoginFailed) {
    // A failed login is the user's request that could not be completed, not a refusal (403).
    return { status: 400, title: TITLES[error.code]!, message: error.description, retryUrl: resume };
  }
  const page: ErrorPageData = {
    status: error.status,
    title: TITLES[error.code] ?? 'This request cannot be processed',
    message: error.description,
  };
  if (error.code === 'temporarily_unavailable') page.retryUrl = retryOf(server, req);
  return page;
}

/**
 * Where "Try again" leads after an outage: the same page for a GET (nothing was done), else the
 * pending request. A provider's callback is not repeatable (its nonce), so it resumes too.
 */
function retryOf(server: AuthorizationServer, req: Request): string {
  const path = req.originalUrl;
  const repeatable =
    req.method === 'GET' &&
    path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.split('?')[0]!.endsWith('/oauth/login/callback');
  return repeatable ? new URL(server.urls.base).origin + path : `${server.urls.authorization}/resume`;
}
