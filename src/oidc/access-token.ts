import { createLocalJWKSet, jwtVerify, SignJWT, type JWK, type JWTVerifyGetKey } from 'jose';
import { randomId } from '../crypto/secrets.js';
import { SIGNING_ALGORITHMS, type Jwk, type KeySet } from './keys.js';

/**
 * What signing and verifying JWT access tokens needs of the server (an `AuthorizationServer` is
 * one): the OpenID Connect signing keys and the issuer.
 */
export interface AccessTokenKeys {
  /** The signing keys, when OpenID Connect is on. */
  readonly oidc?: { readonly keys: { current(): Promise<KeySet> } } | undefined;
  readonly urls: { readonly issuer: string };
}

/** What a JWT access token says (RFC 9068 2.2), as the token's record says it. */
export interface AccessTokenFacts {
  /** The user's id, or the client's `client_id` for the client's own token. */
  sub: string;
  clientId: string;
  scopes: readonly string[];
  /** The resources it is for: its audience. */
  resources: readonly string[];
  /** Epoch milliseconds. */
  issuedAt: number;
  expiresAt: number;
  /** When the user signed in, epoch milliseconds, when known. */
  authTime?: number | undefined;
}

/** The media type of a JWT access token (RFC 9068 2.1), in its header's `typ`. */
export const ACCESS_TOKEN_TYP = 'at+jwt';

/**
 * A JWT access token (RFC 9068), signed by the key that signs ID tokens now: header `typ: at+jwt`
 * and the key's `kid`; `iss`, `sub`, `client_id`, `aud` (the resource, or the resources when
 * several), `iat`, `exp`, a fresh `jti`, `scope` when there is one, and `auth_time` when the
 * sign-in is known. No `acr`: an OpenID 2.0 login says nothing of how the user authenticated.
 * Nothing else: the token travels to resource servers, and the user's claims stay with UserInfo.
 *
 * @see RFC 9068 sections 2.1, 2.2
 */
export async function signAccessToken(
  server: Partial<AccessTokenKeys>,
  facts: AccessTokenFacts,
): Promise<string> {
  if (!server.oidc || !server.urls) {
    // Refused when the server is built (a resource asks for JWT without oidc): not reached.
    throw new Error('openid-oauth-bridge: a JWT access token needs the OpenID Connect signing keys (oidc)');
  }
  const { signer } = await server.oidc.keys.current();
  const seconds = (ms: number) => Math.floor(ms / 1000);
  const audience = facts.resources.length === 1 ? facts.resources[0]! : [...facts.resources];
  return new SignJWT({
    client_id: facts.clientId,
    ...(facts.scopes.length ? { scope: facts.scopes.join(' ') } : {}),
    ...(facts.authTime === undefined ? {} : { auth_time: seconds(facts.authTime) }),
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: ACCESS_TOKEN_TYP })
    .setIssuer(server.urls.issuer)
    .setSubject(facts.sub)
    .setAudience(audience)
    .setIssuedAt(seconds(facts.issuedAt))
    .setExpirationTime(seconds(facts.expiresAt))
    .setJti(randomId())
    .sign(signer.key);
}

/**
 * Whether a presented access token has the shape of a JWT (parts joined by dots), which an opaque
 * token (base64url) never has: such a token is verified before its record is read.
 */
export function looksLikeJwt(token: string): boolean {
  return token.includes('.');
}

/**
 * Checks JWT access tokens as a resource server must (RFC 9068 4): `typ: at+jwt`, signed with an
 * asymmetric algorithm by a key this server still publishes (a retired `kid` fails), this issuer,
 * unexpired at the server's clock, and, when `audience` is given, for that resource. Resolves
 * whether it passed; what failed is not said, as for any other invalid token. The keys' JWK set
 * is made once per set of published keys the server read, not per request.
 */
export function accessTokenVerifier(server: AccessTokenKeys, clock: () => number) {
  let made: { published: readonly Jwk[]; getKey: JWTVerifyGetKey } | undefined;
  return async function verify(jwt: string, audience: string | undefined): Promise<boolean> {
    if (!server.oidc) return false;
    const { published } = await server.oidc.keys.current();
    if (made?.published !== published) {
      made = { published, getKey: createLocalJWKSet({ keys: published as JWK[] }) };
    }
    try {
      await jwtVerify(jwt, made.getKey, {
        typ: ACCESS_TOKEN_TYP,
        issuer: server.urls.issuer,
        ...(audience === undefined ? {} : { audience }),
        algorithms: [...SIGNING_ALGORITHMS],
        currentDate: new Date(clock()),
        requiredClaims: ['exp', 'iat', 'sub', 'client_id', 'jti'],
      });
      return true;
    } catch {
      return false;
    }
  };
}
