/**
 * An authorization server for `requireBearer` alone, over `memoryStorage()` with the given access
 * tokens stored (hashed, as the library stores them): for the bench's parts of `GET /v1/realms`
 * (`contenders/express-parts.mjs`) and the in-process probe (`probes/bearer.mjs`).
 */
import { createAuthorizationServer, memoryStorage } from 'openid-oauth-bridge';
import { SCOPE, sha256 } from './fixtures.mjs';

/**
 * Resolves the server once every plaintext in `tokens` is stored as a live access token;
 * `options` are added to the server's (`{ usage: false }`, say).
 */
export async function bearerOnlyServer(tokens, options = {}) {
  const storage = memoryStorage();
  const now = Date.now();
  // A token works only with its client and its standing grant.
  await storage.clients.create({
    clientId: 'bench-client',
    applicationName: 'Bench client',
    redirectUri: 'https://client.example/cb',
    grantType: 'authorization_code',
    secretHash: null,
    scopes: [SCOPE],
    disabled: false,
    createdAt: now,
  });
  const grantId = 'bench-grant';
  await storage.grants.save({
    grantId,
    userId: 'bench-user',
    clientId: 'bench-client',
    scopes: [SCOPE],
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  });
  for (const plaintext of tokens) {
    await storage.tokens.save({
      clientId: 'bench-client',
      userId: 'bench-user',
      scopes: [SCOPE],
      grantId,
      tokenHash: sha256(plaintext),
      type: 'access_token',
      origin: 'authorization_code',
      createdAt: now,
      // Hours, not the default hour: a long run must not see its tokens expire.
      expiresAt: now + 6 * 3_600_000,
      rotatedAt: null,
    });
  }
  return createAuthorizationServer({
    baseUrl: 'http://127.0.0.1:1',
    storage,
    providers: [{ name: 'Unused', identifier: 'http://127.0.0.1:2/' }],
    session: { secret: 'bench-session-secret-0123456789abcdefghijklmnopqrstuvwxyz' },
    scopes: { [SCOPE]: 'See the list of your realms' },
    ...options,
  });
}
