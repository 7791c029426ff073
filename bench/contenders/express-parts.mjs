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
import { requireBearer } from 'openid-oauth-bridge';
import { bearerOnlyServer } from '../lib/bearer-only.mjs';
import { listen, ready, tokenCount, workload } from '../lib/contender.mjs';
import { ACCESS_TOKEN, fillerTokenFor, REALMS, SCOPE } from '../lib/fixtures.mjs';

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
    const tokens = [ACCESS_TOKEN, ...Array.from({ length: tokenCount }, (_, i) => fillerTokenFor(i))];
    return requireBearer(await bearerOnlyServer(tokens), { scopes: [SCOPE] });
  }
  throw new Error(`BENCH_PART must be hash or bearer, not ${name}`);
}
