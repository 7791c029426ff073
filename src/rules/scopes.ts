import { OAuthError } from '../errors/oauth-error.js';

/** RFC 6749 section 3.3 scope-token. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scopes of a `scope` parameter (RFC 6749 3.3), each of which must be in `allowed`; without
 * the parameter, `defaults` (RFC 6749 3.3: the server's pre-defined default), by default all of
 * `allowed`. Used by the authorization request (allowed: the client's scopes; defaults: the
 * client's default scopes) and by a refresh (allowed: the scopes originally granted, RFC 6749 6).
 *
 * @throws OAuthError `invalid_scope` with `refusal` as its description, followed by the refused
 * scopes (a client's developer sees which one to drop; a scope token is printable ASCII, as an
 * `error_description` must be, RFC 6749 4.1.2.1). A malformed token is not echoed.
 */
export function requestedScopes(
  scope: string | undefined,
  allowed: readonly string[],
  refusal: string,
  defaults: readonly string[] = allowed,
): string[] {
  if (scope === undefined) return [...defaults];
  const requested = [...new Set(scope.split(' ').filter(Boolean))];
  if (requested.length === 0 || requested.some((s) => !SCOPE_TOKEN.test(s))) {
    throw new OAuthError('invalid_scope', 'The scope parameter is malformed.');
  }
  const refused = requested.filter((s) => !allowed.includes(s));
  if (refused.length > 0) throw new OAuthError('invalid_scope', `${refusal} ${namedScopes(refused)}`);
  return requested;
}

/**
 * The scopes of a client's request (the authorization endpoint's, a device's): those its `scope`
 * parameter names, each registered for the client, or the client's default scopes without one;
 * and each offered by the server (`offered`, the keys of its `scopes` option).
 *
 * @throws OAuthError `invalid_scope`, naming the refused scopes
 */
export function clientRequestScopes(
  scope: string | undefined,
  client: { readonly scopes: readonly string[]; readonly defaultScopes?: readonly string[] | null },
  offered: Readonly<Record<string, string>>,
): string[] {
  const scopes = requestedScopes(
    scope,
    client.scopes,
    'The client may not request some of these scopes.',
    client.defaultScopes ?? client.scopes,
  );
  refuseUnoffered(offered, scopes);
  return scopes;
}

/**
 * Refuses scopes the server does not offer (the keys of its `scopes` option), naming them: a
 * client registered for a scope the server no longer offers gets no sign-in page for it.
 *
 * @throws OAuthError `invalid_scope`
 */
export function refuseUnoffered(offered: Readonly<Record<string, string>>, scopes: readonly string[]): void {
  const unoffered = unofferedScopes(offered, scopes);
  if (unoffered.length > 0) {
    throw new OAuthError(
      'invalid_scope',
      `The requested scope is not offered by this server. ${namedScopes(unoffered)}`,
    );
  }
}

/** `Refused scope: a` or `Refused scopes: a b`, for an `invalid_scope` description. */
function namedScopes(scopes: readonly string[]): string {
  return `Refused scope${scopes.length === 1 ? '' : 's'}: ${scopes.join(' ')}`;
}

/**
 * The first of `scopes` the server does not offer (the keys of its `scopes` option), or
 * `undefined`; a server that names no scopes offers any well-formed one.
 */
export function unofferedScope(
  offered: Readonly<Record<string, string>>,
  scopes: readonly string[],
): string | undefined {
  return unofferedScopes(offered, scopes)[0];
}

/** Every one of `scopes` the server does not offer (see {@link unofferedScope}). */
export function unofferedScopes(
  offered: Readonly<Record<string, string>>,
  scopes: readonly string[],
): string[] {
  if (Object.keys(offered).length === 0) return [];
  return scopes.filter((scope) => !Object.hasOwn(offered, scope));
}

/** Whether `granted` covers every scope of `requested`. */
export function scopesCover(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s));
}
