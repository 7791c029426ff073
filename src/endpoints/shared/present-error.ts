import { LoginFailed, ProviderUnreachable } from '../../errors/login-failed.js';
import { toOAuthError, type OAuthError } from '../../errors/oauth-error.js';
import { emit, eventContext } from '../../events/emit.js';
import type { ErrorPageData } from '../../pages/types.js';
import { send, sendJson } from '../../http/answer.js';
import type { Context } from './context.js';
import { backToClient, redirectUrl } from '../../http/redirect.js';
import { requestIdOf } from '../../http/request-id.js';

const TITLES: Record<string, string> = {
  invalid_request: 'This request cannot be processed',
  access_denied: 'Sign-in did not complete',
  server_error: 'Something went wrong',
  temporarily_unavailable: 'Temporarily unavailable',
};

/** Error codes a client may receive at its redirect URI (RFC 6749 4.1.2.1). */
const REDIRECTABLE_CODES = new Set([
  'invalid_request',
  'unauthorized_client',
  'access_denied',
  'unsupported_response_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
]);

/**
 * The one place where a failed request is answered, whatever failed (a step, the session store,
 * the storage, the provider, a bug):
 *
 * - a `json` endpoint answers the RFC 6749 5.2 JSON error, with the error's headers
 *   (`WWW-Authenticate`, `Retry-After`);
 * - a `page` endpoint sends the error to the client's redirect URI when it is verified and the
 *   error may go there (RFC 6749 4.1.2.1), and otherwise shows an error page with a way back;
 * - every 5xx is reported once ({@link reportFailure}). Internals are never shown.
 */
export function presentError(ctx: Context, err: unknown): void {
  const error = toOAuthError(err);
  const { res, endpoint } = ctx;
  const toClient = endpoint.kind === 'page' && error.redirectable && ctx.redirectTarget !== undefined;
  const pageData = endpoint.kind === 'page' && !toClient ? errorPage(ctx, error) : undefined;
  const status = pageData?.status ?? error.status;
  if (status >= 500) reportFailure(ctx, error, status);
  if (res.headersSent) {
    res.end();
    return;
  }
  res.set(error.headers);
  if (endpoint.kind !== 'page') return sendJson(res, status, error.toJSON());
  if (pageData === undefined) {
    const params = { error: error.code, error_description: error.description };
    return send(res, backToClient(ctx.redirectTarget!, params, ctx.req.method));
  }
  // A page that was to redirect (a login, say) must not keep its Location.
  res.removeHeader('Location');
  send(res, { kind: 'page', status, html: ctx.server.pages.error(pageData) });
}

function errorPage(ctx: Context, error: OAuthError): ErrorPageData {
  if (error instanceof LoginFailed) {
    const unreachable = error instanceof ProviderUnreachable;
    const others = unreachable && error.otherProviderUrl !== undefined;
    return {
      status: unreachable ? 502 : 400,
      title: unreachable ? 'Your OpenID provider is not answering' : TITLES[error.code]!,
      message: unreachable
        ? `${error.description} It may be down or slow. Try again in a moment${others ? ', or choose another provider' : ''}.`
        : error.description,
      retryUrl: error.retryUrl,
      ...(others ? { otherProviderUrl: error.otherProviderUrl } : {}),
      ...wayBack(ctx, error),
    };
  }
  return {
    status: error.status,
    title: TITLES[error.code] ?? 'This request cannot be processed',
    message: error.description,
    ...(error.code === 'temporarily_unavailable' ? { retryUrl: retryOf(ctx) } : {}),
    ...wayBack(ctx, error),
  };
}

/**
 * A way back from an error page: to the client with the error, when its redirect URI is verified;
 * otherwise to the authorization in progress, if any; otherwise to the site.
 */
function wayBack(ctx: Context, error: OAuthError): Pick<ErrorPageData, 'backUrl' | 'backLabel'> {
  const { server, redirectTarget } = ctx;
  if (redirectTarget !== undefined) {
    const code = REDIRECTABLE_CODES.has(error.code) ? error.code : 'access_denied';
    return {
      backUrl: redirectUrl(redirectTarget, { error: code, error_description: error.description }),
      backLabel: 'Return to the application',
    };
  }
  if (ctx.endpoint.name.startsWith('developers')) {
    return { backUrl: server.urls.developers, backLabel: 'Back to your applications' };
  }
  if (ctx.session?.state.pending !== undefined) {
    return { backUrl: server.urls.resume, backLabel: 'Start again' };
  }
  return { backUrl: `${server.urls.origin}/`, backLabel: 'Start again' };
}

/**
 * Where "Try again" leads after an outage: the same page for a GET (nothing was done), else the
 * authorization in progress. A provider's callback is not repeatable (its nonce), so it resumes.
 */
function retryOf(ctx: Context): string {
  const { req, server } = ctx;
  const path = req.originalUrl;
  const repeatable =
    req.method === 'GET' &&
    path.startsWith('/') &&
    !path.startsWith('//') &&
    !path.split('?')[0]!.endsWith('/oauth/login/callback');
  return repeatable ? server.urls.origin + path : server.urls.resume;
}

/**
 * Reports a 5xx answer once, with the same fields wherever it came from: to the logger (`error`
 * for a 500, `warn` for an outage of the storage or of a provider, which is not a bug), to the
 * host's `onError` hook, and as a `server.error` event. What is reported is the thrown error
 * itself, never the request's parameters, headers or body, so no token, code or secret reaches
 * the logs.
 */
function reportFailure(ctx: Context, error: OAuthError, status: number): void {
  const { server, req, res } = ctx;
  const requestId = requestIdOf(req, res);
  const route = `${req.method} ${req.originalUrl.split('?')[0]}`;
  const cause = error.cause ?? error;
  if (status === 500) {
    server.logger.error('internal error', { requestId, route, error: cause });
  } else {
    // An outage's cause in the line itself (refused, DNS, timeout, TLS look alike otherwise), for
    // loggers that print only the message.
    const what = status === 503 ? 'storage unavailable' : 'OpenID provider unreachable';
    server.logger.warn(`${what}: ${deepestMessage(cause)}`, { requestId, route, error: cause });
  }
  emit(server, {
    type: 'server.error',
    endpoint: ctx.endpoint.name,
    status,
    requestId,
    error: cause,
    ...eventContext(req),
  });
  const hook = server.options.onError;
  if (hook === undefined) return;
  try {
    hook(cause, { requestId, route, status });
  } catch (hookError) {
    server.logger.error('the onError hook threw', { requestId, route, error: hookError });
  }
}

/** The message of the innermost error that says what failed (its own, or a cause's, the deepest). */
function deepestMessage(error: unknown): string {
  let said = 'no detail';
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.message !== '' && e.message !== 'fetch failed') said = e.message;
  }
  return said;
}
