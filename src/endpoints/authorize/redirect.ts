import type { Response } from 'express';
import type { OAuthError } from '../../errors/oauth-error.js';
import type { AuthorizationServer } from '../../server.js';
import type { PendingAuthorization } from '../../session/state.js';

/**
 * Where and how results of one authorization request go back to the client: the query for
 * `code`, the fragment for `token` (RFC 6749 4.1.2 and 4.2.2). Set once the client and its
 * redirect URI are verified; until then errors are shown as a page, never redirected.
 */
export interface RedirectTarget {
  redirectUri: string;
  responseType: 'code' | 'token';
  state: string | null;
  /** Sent as `iss` in every response, success or error (RFC 9207 2). */
  issuer: string;
}

export interface AuthorizeLocals {
  redirectTarget?: RedirectTarget;
}

export function targetOf(server: AuthorizationServer, pending: PendingAuthorization): RedirectTarget {
  return {
    redirectUri: pending.redirectUri,
    responseType: pending.responseType,
    state: pending.state,
    issuer: server.urls.issuer,
  };
}

/**
 * The redirect URI with `params`, `state` and `iss` appended to its query or put in its fragment.
 * `iss` lets a client that talks to several authorization servers tell which one answered (RFC
 * 9207, the mix-up defence of RFC 9700 4.4.2).
 */
export function redirectUrl(target: RedirectTarget, params: Record<string, string>): string {
  const all = new URLSearchParams(params);
  if (target.state !== null) all.set('state', target.state);
  all.set('iss', target.issuer);
  if (target.responseType === 'token') return `${target.redirectUri}#${all}`;
  return `${target.redirectUri}${target.redirectUri.includes('?') ? '&' : '?'}${all}`;
}

/**
 * Sends the browser back to the client. 303 after a form POST so the browser does not re-send
 * the form (RFC 9700 4.12: never 307); 302 otherwise.
 *
 * With no body, as oauth2orize answers: `res.redirect` would negotiate and write a "Redirecting
 * to" text or HTML body that no browser shows, on the path of every authorization. `location`
 * percent-encodes the URL as `res.redirect` does.
 */
export function redirectToClient(
  res: Response,
  target: RedirectTarget,
  params: Record<string, string>,
): void {
  res.location(redirectUrl(target, params));
  res.statusCode = res.req.method === 'POST' ? 303 : 302;
  res.end();
}

/** RFC 6749 4.1.2.1 / 4.2.2.1 error response. */
export function redirectError(res: Response, target: RedirectTarget, error: OAuthError): void {
  redirectToClient(res, target, { error: error.code, error_description: error.description });
}
