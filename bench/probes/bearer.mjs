/**
 * In-process probe, not a contender: what `requireBearer` costs per call without HTTP, next to a
 * step that only hashes the token and one that does nothing, over `memoryStorage()` with 1,000
 * stored tokens, 50 calls in flight at a time (as the bench's 50 connections).
 *
 *   node bench/probes/bearer.mjs
 *
 * Prints CPU microseconds per call, 5 rounds taken in turn.
 */
import { hash } from 'node:crypto';
import { requireBearer } from 'openid-oauth-bridge';
import { bearerOnlyServer, cpuPerBearerCall } from '../lib/bearer-only.mjs';
import { fillerTokenFor, SCOPE } from '../lib/fixtures.mjs';

const TOKENS = 1000;
const CALLS = 200_000;
const IN_FLIGHT = 50;

const server = await bearerOnlyServer(Array.from({ length: TOKENS }, (_, i) => fillerTokenFor(i)));

const steps = {
  nothing: (_req, _res, next) => next(),
  hash: (req, _res, next) => {
    hash('sha256', req.headers.authorization.slice('Bearer '.length), 'base64url');
    next();
  },
  requireBearer: requireBearer(server, { scopes: [SCOPE] }),
};

/** CPU microseconds per call of `step` (lib/bearer-only.mjs). */
const measure = (step) => cpuPerBearerCall(step, { calls: CALLS, inFlight: IN_FLIGHT, tokens: TOKENS });

const results = Object.fromEntries(Object.keys(steps).map((name) => [name, []]));
for (let round = 0; round < 5; round++) {
  for (const [name, step] of Object.entries(steps)) results[name].push(await measure(step));
}
for (const [name, values] of Object.entries(results)) {
  console.log(`${name.padEnd(14)} ${values.map((v) => v.toFixed(2)).join(', ')} µs CPU per call`);
}
