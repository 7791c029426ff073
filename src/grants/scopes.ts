import { OAuthError } from '../errors/oauth-error.js';

/** RFC 6749 section 3.3 scope-token. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scopes of a `scope` parameter (RFC 6749 3.3), each of which must be in `allowed`; without
 * the parameter, `defaults` (RFC 6749 3.3: the server's pre-defined default), by default all of
 * `allowed`. Used by the authorization request (allowed: the client's scopes; defaults: the
 * client's default scopes) and by a refresh (allowed: the scopes originally granted, RFC 6749 6).
 *
 * @throws OAuthError `invalid_scope` with `refusal` as its description.
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
  if (!scopesCover(allowed, requested)) throw new OAuthError('invalid_scope', refusal);
  return requested;
}

/**
 * The first of `scopes` the server does not offer (the keys of its `scopes` option), or
 * `undefined`; a server that names no scopes offers any well-formed one.
 */
export function unofferedScope(
  offered: Readonly<Record<string, string>>,
  scopes: readonly string[],
): string | undefined {
  if (Object.keys(offered).length === 0) return undefined;
  return scopes.find((scope) => !Object.hasOwn(offered, scope));
}

/** Whether `granted` covers every scope of `requested`. */
export function scopesCover(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s));
}
