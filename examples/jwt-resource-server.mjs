// A resource server in a process of its own that takes JWT access tokens (RFC 9068) with jose and
// the authorization server's published keys alone: no call to the authorization server per
// request. Its tokens come from a resource declared with accessTokenFormat: 'jwt'
// (docs/jwt-access-tokens.md); with the demo: ACCESS_TOKEN_FORMAT=jwt npm run demo, then
//   ISSUER=http://localhost:3000 AUDIENCE=http://localhost:3000 PORT=4000 node examples/jwt-resource-server.mjs
// A token revoked at the authorization server still works here until its exp: keep them short.
/* global console, fetch, process, URL */
import { createServer } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const issuer = process.env.ISSUER ?? 'http://localhost:3000';
// The resource this server is: the `resource` it was declared with, the tokens' `aud`.
const audience = process.env.AUDIENCE ?? issuer;
const port = Number(process.env.PORT ?? 4000);

// Where the keys are, from the issuer's metadata (OpenID Connect Discovery 4), which must name
// this very issuer (RFC 8414 3.3).
const metadata = /** @type {{ issuer: string, jwks_uri: string }} */ (
  await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()
);
if (metadata.issuer !== issuer)
  throw new Error(`the metadata names the issuer ${metadata.issuer}, not ${issuer}`);
// Fetched once, then again when a token names a key it has not seen (a rotation), and at most
// 5 minutes after the last fetch, as the JWKS's Cache-Control says (jose's default is 10).
const keys = createRemoteJWKSet(new URL(metadata.jwks_uri), { cacheMaxAge: 300_000 });

/**
 * The token's claims, or null when it is not a JWT access token of this issuer for this resource.
 * @param {string | undefined} authorization
 */
async function verify(authorization) {
  const token = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization ?? '')?.[1];
  if (token === undefined) return null;
  try {
    // RFC 9068 4: typ at+jwt, the issuer, this audience, unexpired; asymmetric algorithms only.
    const { payload } = await jwtVerify(token, keys, {
      typ: 'at+jwt',
      issuer,
      audience,
      algorithms: ['RS256', 'ES256'],
      requiredClaims: ['exp', 'sub', 'client_id'],
    });
    return payload;
  } catch {
    return null;
  }
}

const server = createServer(async (req, res) => {
  if (req.method !== 'GET' || req.url !== '/whoami') {
    res.writeHead(404).end();
    return;
  }
  const claims = await verify(req.headers.authorization);
  if (claims === null) {
    res.writeHead(401, {
      'WWW-Authenticate': `Bearer error="invalid_token", error_description="The access token is invalid or has expired."`,
    });
    res.end();
    return;
  }
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  res.writeHead(200, { 'Content-Type': 'application/json' });
  // A client's own token (client credentials) has its client_id as sub: no member behind it.
  res.end(
    JSON.stringify({
      sub: claims.sub,
      client_id: claims.client_id,
      scopes,
      member: claims.sub !== claims.client_id,
    }),
  );
});
server.listen(port, '127.0.0.1', () => {
  console.log(
    `JWT resource server for ${audience} on http://127.0.0.1:${port}/whoami (keys: ${metadata.jwks_uri})`,
  );
});
