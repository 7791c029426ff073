import { compactVerify, createLocalJWKSet, SignJWT, type JWK } from 'jose';
import { OAuthError } from '../errors/oauth-error.js';
import type { StoredCode } from '../storage/keys.js';
import type { AccountClaims } from '../storage/types.js';
import { SIGNING_ALGORITHMS, type KeySet } from './keys.js';
import { RESERVED_CLAIMS } from './reserved-claims.js';

/** Your own claims for a subject, given the scopes granted (`oidc.claims`). */
export type OidcClaimsHook = (
  subject: string,
  scopes: readonly string[],
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** What making and reading ID tokens needs of the server (an `AuthorizationServer` is one). */
export interface IdTokenIssuer {
  /** The signing keys, when OpenID Connect is on. */
  readonly oidc?: { readonly keys: { current(): Promise<KeySet> } };
  readonly urls: { readonly issuer: string };
  readonly options: { readonly oidc?: { readonly idTokenTtl: number; readonly claims?: OidcClaimsHook } };
}

/**
 * The longest ID token this server issues, and so the longest `id_token_hint` it takes back at the
 * authorization and end-session endpoints: a relying party gives back, in a URL, any ID token it
 * was given. 12 KiB leaves room for the rest of that URL and the request's headers within Node's
 * default 16 KiB header limit. A long nonce, many teams and the host's claims fit many times over;
 * an ID token past it is not issued ({@link idTokenFor}).
 */
export const MAX_ID_TOKEN_LENGTH = 12_288;

/** The claims each scope releases (OpenID Connect Core 5.4), of those the login gave. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'preferred_username', 'steam_id', 'picture', 'profile', 'groups'],
};

/**
 * The host's own claims for `subject` and `scopes` (`oidc.claims`), reserved names dropped. A hook
 * that throws fails the request (a 500, logged): its claims were asked for.
 */
export async function hostClaims(
  server: IdTokenIssuer,
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

/** Whether `scopes` release `claim` (`groups` with `profile`): for ID tokens, UserInfo and introspection alike. */
export function releases(scopes: readonly string[], claim: string): boolean {
  return scopes.some((scope) => SCOPE_CLAIMS[scope]?.includes(claim) === true);
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
  server: IdTokenIssuer,
  code: Pick<StoredCode, 'clientId' | 'userId' | 'claims' | 'authTime' | 'nonce'>,
  scopes: readonly string[],
  now: number,
): Promise<string | undefined> {
  if (!server.oidc || !scopes.includes('openid')) return undefined;
  const { signer } = await server.oidc.keys.current();
  const issuedAt = Math.floor(now / 1000);
  const own = await hostClaims(server, code.userId, scopes);
  const idToken = await new SignJWT({
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
  if (idToken.length > MAX_ID_TOKEN_LENGTH) {
    throw new OAuthError('server_error', 'The ID token would be too large to be given back to this server.', {
      cause: new RangeError(
        `the ID token for client ${code.clientId} is ${idToken.length} characters, over the ${MAX_ID_TOKEN_LENGTH} a relying party can give back as id_token_hint: release fewer or shorter claims from oidc.claims`,
      ),
    });
  }
  return idToken;
}

/** An ID token's `typ`: this server writes `JWT`; others may leave it out. Never `at+jwt`. */
function isIdTokenType(typ: string | undefined): boolean {
  return typ === undefined || typ.toLowerCase() === 'jwt';
}

/** What an `id_token_hint` names: the user (`sub`) and the relying party (`aud`). */
export interface IdTokenHint {
  subject: string;
  audience: string;
}

/**
 * An `id_token_hint` read back (OpenID Connect Core 3.1.2.1, RP-Initiated Logout 2): an ID token
 * this server signed with a key it still publishes, with this issuer, one subject and one
 * audience. An expired one is fine: it only names the user and the relying party. `null` when it
 * is anything else.
 */
export async function readIdTokenHint(server: IdTokenIssuer, hint: string): Promise<IdTokenHint | null> {
  const { published } = await server.oidc!.keys.current();
  let payload: { iss?: unknown; sub?: unknown; aud?: unknown };
  try {
    const verified = await compactVerify(hint, createLocalJWKSet({ keys: published as JWK[] }), {
      algorithms: [...SIGNING_ALGORITHMS],
    });
    // Only an ID token: the same keys sign JWT access tokens (`at+jwt`, RFC 9068 2.1), whose
    // audience is a resource, not a relying party.
    if (!isIdTokenType(verified.protectedHeader.typ)) return null;
    payload = JSON.parse(new TextDecoder().decode(verified.payload)) as typeof payload;
  } catch {
    return null;
  }
  const audience = Array.isArray(payload.aud) && payload.aud.length === 1 ? payload.aud[0] : payload.aud;
  if (payload.iss !== server.urls.issuer || typeof payload.sub !== 'string' || typeof audience !== 'string') {
    return null;
  }
  return { subject: payload.sub, audience };
}
