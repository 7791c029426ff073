import type { Answer } from './answer.js';

/**
 * Where and how the results of one authorization request go back to the client: the query for
 * `code`, the fragment for `token` (RFC 6749 4.1.2 and 4.2.2). Known once the client and its
 * redirect URI are verified; until then errors are shown as a page, never redirected.
 */
export interface RedirectTarget {
  redirectUri: string;
  responseType: 'code' | 'token';
  state: string | null;
  /** Sent as `iss` in every response, success or error (RFC 9207 2). */
  issuer: string;
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
 * Sends the browser back to the client: 303 after a form POST so the browser does not re-send
 * the form (RFC 9700 4.12: never 307), 302 otherwise.
 */
export function backToClient(
  target: RedirectTarget,
  params: Record<string, string>,
  method: string,
): Extract<Answer, { kind: 'redirect' }> {
  return { kind: 'redirect', status: method === 'POST' ? 303 : 302, location: redirectUrl(target, params) };
}

/** The target of a request whose redirect URI was verified, answered by `issuer`. */
export function redirectTargetOf(
  issuer: string,
  request: Pick<RedirectTarget, 'redirectUri' | 'responseType' | 'state'>,
): RedirectTarget {
  return {
    redirectUri: request.redirectUri,
    responseType: request.responseType,
    state: request.state,
    issuer,
  };
}
