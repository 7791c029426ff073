/**
 * An authorization server for `requireBearer` alone, over `memoryStorage()` with the given access
 * tokens stored (hashed, as the library stores them): for the bench's parts of `GET /v1/realms`
 * (`contenders/express-parts.mjs`) and the in-process probes (`probes/bearer.mjs`, `probes/figures.mjs`,
 * `probes/usage.mjs`), with the probes' one way to time a step.
 */
import { createAuthorizationServer, memoryStorage } from 'openid-oauth-bridge';
import { fillerTokenFor, SCOPE, sha256 } from './fixtures.mjs';

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

/**
 * CPU microseconds per call of `step` (a `requireBearer` or the like): `calls` calls, `inFlight`
 * at a time, each presenting the next of `tokens` filler tokens and passed on by `next()`; a
 * refusal fails the probe. `after` runs inside the timed part (a flush of what the calls counted).
 */
export async function cpuPerBearerCall(step, { calls, inFlight, tokens, after = async () => {} }) {
  const start = process.cpuUsage();
  for (let done = 0; done < calls; done += inFlight) {
    await Promise.all(
      Array.from(
        { length: inFlight },
        (_, i) =>
          new Promise((resolve, reject) => {
            // What requireBearer reads of a request: the header, and the URL (no token in its query).
            const req = {
              method: 'GET',
              baseUrl: '',
              originalUrl: '/v1/realms',
              url: '/v1/realms',
              headers: { authorization: `Bearer ${fillerTokenFor((done + i) % tokens)}` },
            };
            const res = { locals: {}, status: () => reject(new Error('the token was refused')) };
            step(req, res, resolve);
          }),
      ),
    );
  }
  await after();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}
