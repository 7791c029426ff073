import { SignJWT } from 'jose';
import type { AuthorizationServer } from '../config/server.js';
import type { StoredCode } from '../storage/keys.js';
import type { AccountClaims } from '../storage/types.js';
import { RESERVED_CLAIMS } from './reserved-claims.js';

/** The claims each scope releases (OpenID Connect Core 5.4), of those the login gave. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'preferred_username', 'steam_id', 'picture', 'profile', 'groups'],
};

/**
 * The host's own claims for `subject` and `scopes` (`oidc.claims`), reserved names dropped. A hook
 * that throws fails the request (a 500, logged): its claims were asked for.
 */
export async function hostClaims(
  server: AuthorizationServer,
  subject: string,
  scopes: readonly string[],
): Promise<Record<string, unknown>> {
  const hook = server.options.oidc?.claims;
  if (!hook) return {};
  const claims = await hook(subject, scopes);
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw new TypeError('oidc.claims must resolve an object of claims');
  }
  return Object.fromEntries(
    Object.entries(claims).filter(([name, value]) => !RESERVED_CLAIMS.has(name) && value !== undefined),
  );
}

/** The account's claims that `scopes` release. */
export function releasedClaims(
  claims: Readonly<AccountClaims> | undefined,
  scopes: readonly string[],
): AccountClaims {
  if (claims === undefined) return {};
  const names = new Set(scopes.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []));
  return Object.fromEntries(Object.entries(claims).filter(([name]) => names.has(name)));
}

/**
 * The ID token of a code exchange (OpenID Connect Core 2, 3.1.3.6) or of a device code: signed by the key that signs
 * now, with `iss`, `sub` (the user id tokens carry), `aud` and `azp` (the client), `iat`, `exp`,
 * `auth_time` (the login the code was issued after), the request's `nonce` when it sent one, and
 * the claims the granted scopes release. `undefined` when OpenID Connect is off or `openid` was
 * not granted: the answer is then plain OAuth 2.0.
 */
export async function idTokenFor(
  server: AuthorizationServer,
  code: Pick<StoredCode, 'clientId' | 'userId' | 'claims' | 'authTime' | 'nonce'>,
  scopes: readonly string[],
  now: number,
): Promise<string | undefined> {
  if (!server.oidc || !scopes.includes('openid')) return undefined;
  const { signer } = await server.oidc.keys.current();
  const issuedAt = Math.floor(now / 1000);
  const own = await hostClaims(server, code.userId, scopes);
  return new SignJWT({
    ...releasedClaims(code.claims, scopes),
    ...own,
    azp: code.clientId,
    ...(code.authTime === undefined ? {} : { auth_time: Math.floor(code.authTime / 1000) }),
    ...(code.nonce === undefined ? {} : { nonce: code.nonce }),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'JWT' })
    .setIssuer(server.urls.issuer)
    .setSubject(code.userId)
    .setAudience(code.clientId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + server.options.oidc!.idTokenTtl)
    .sign(signer.key);
}
