/**
 * Parts of the library's `GET /v1/realms`, one at a time, on bare Express: for finding where the
 * library's cost over the baseline goes (`--contenders express,express-hash,express-bearer,…`).
 * Not part of the default run; `realms` only.
 *
 *   BENCH_PART=hash    the route with one step before it that hashes the bearer token (SHA-256,
 *                      as the library looks tokens up), and nothing else
 *   BENCH_PART=bearer  the route behind `requireBearer` over `memoryStorage()`, and nothing else
 *                      of the library mounted
 */
import { hash } from 'node:crypto';
import express from 'express';
import { createAuthorizationServer, memoryStorage, requireBearer } from 'openid-oauth-bridge';
import { listen, ready, tokenCount, workload } from '../lib/contender.mjs';
import { ACCESS_TOKEN, fillerTokenFor, REALMS, SCOPE, sha256 } from '../lib/fixtures.mjs';

if (workload !== 'realms') throw new Error(`express-parts serves the realms workload only, not ${workload}`);
const part = process.env.BENCH_PART;

const app = express();
app.disable('x-powered-by');
app.get('/v1/realms', await step(part), (_req, res) => {
  res.json(REALMS);
});
const { server } = await listen(app);
ready(server);

async function step(name) {
  if (name === 'hash') {
    return (req, _res, next) => {
      hash('sha256', req.headers.authorization.slice('Bearer '.length), 'base64url');
      next();
    };
  }
  if (name === 'bearer') {
    const storage = memoryStorage();
    const now = Date.now();
    const save = (plaintext, i) =>
      storage.tokens.saveAccessToken({
        clientId: 'bench-client',
        userId: 'bench-user',
        scopes: [SCOPE],
        grantId: `grant-${i}`,
        tokenHash: sha256(plaintext),
        origin: 'authorization_code',
        createdAt: now,
        expiresAt: now + 6 * 3_600_000,
      });
    await save(ACCESS_TOKEN, 'access');
    for (let i = 0; i < tokenCount; i++) await save(fillerTokenFor(i), i);
    const authorizationServer = createAuthorizationServer({
      baseUrl: 'http://127.0.0.1:1',
      storage,
      providers: [{ name: 'Unused', identifier: 'http://127.0.0.1:2/' }],
      session: { secret: 'bench-session-secret-0123456789abcdefghijklmnopqrstuvwxyz' },
      scopes: { [SCOPE]: 'See the list of your realms' },
    });
    return requireBearer(authorizationServer, { scopes: [SCOPE] });
  }
  throw new Error(`BENCH_PART must be hash or bearer, not ${name}`);
}
