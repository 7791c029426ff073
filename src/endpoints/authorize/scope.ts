import { OAuthError } from '../../errors/oauth-error.js';
import type { ClientRecord } from '../../storage/types.js';

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * The scopes granted for a request (RFC 6749 3.3): each requested scope must be allowed for the
 * client; no `scope` parameter means every scope the client is allowed.
 */
export function parseScope(client: ClientRecord, scope: string | undefined): string[] {
  if (scope === undefined) return [...client.scopes];
  const requested = [...new Set(scope.split(' ').filter(Boolean))];
  if (requested.length === 0 || requested.some((s) => !SCOPE_TOKEN.test(s))) {
    throw new OAuthError('invalid_scope', 'The scope parameter is malformed.');
  }
  const unknown = requested.filter((s) => !client.scopes.includes(s));
  if (unknown.length)
    throw new OAuthError('invalid_scope', 'The client may not request some of these scopes.');
  return requested;
}

/** Whether `granted` covers every scope of `requested`. */
export function scopesCover(granted: readonly string[], requested: readonly string[]): boolean {
  return requested.every((s) => granted.includes(s));
}
