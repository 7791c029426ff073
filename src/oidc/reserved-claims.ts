/**
 * Claim names the ID token's issuer decides (OpenID Connect Core 2, 3.1.3.6; `sid` of the logout
 * specifications): neither a provider preset's account claims nor the host's `oidc.claims` may set
 * them.
 */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set([
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'nbf',
  'jti',
  'auth_time',
  'nonce',
  'azp',
  'acr',
  'amr',
  'at_hash',
  'c_hash',
  'sid',
]);
