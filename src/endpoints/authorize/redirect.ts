import type { Response } from 'express';
import type { OAuthError } from '../../errors/oauth-error.js';
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
}

export interface AuthorizeLocals {
  redirectTarget?: RedirectTarget;
}

export function targetOf(pending: PendingAuthorization): RedirectTarget {
  return { redirectUri: pending.redirectUri, responseType: pending.responseType, state: pending.state };
}

/** The redirect URI with `params` appended to its query or put in its fragment. */
export function redirectUrl(target: RedirectTarget, params: Record<string, string>): string {
  const all = new URLSearchParams(params);
  if (target.state !== null) all.set('state', target.state);
  if (target.responseType === 'token') return `${target.redirectUri}#${all}`;
  return `${target.redirectUri}${target.redirectUri.includes('?') ? '&' : '?'}${all}`;
}

/**
 * Sends the browser back to the client. 303 after a form POST so the browser does not re-send
 * the form (RFC 9700 4.12: never 307); 302 otherwise.
 */
export function redirectToClient(
  res: Response,
  target: RedirectTarget,
  params: Record<string, string>,
): void {
  res.redirect(res.req.method === 'POST' ? 303 : 302, redirectUrl(target, params));
}

/** RFC 6749 4.1.2.1 / 4.2.2.1 error response. */
export function redirectError(res: Response, target: RedirectTarget, error: OAuthError): void {
  redirectToClient(res, target, { error: error.code, error_description: error.description });
}
