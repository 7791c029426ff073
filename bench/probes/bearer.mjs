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
import { bearerOnlyServer } from '../lib/bearer-only.mjs';
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

/** CPU microseconds per call of `step`, each call answered by `next()` or failing the probe. */
async function measure(step) {
  const start = process.cpuUsage();
  for (let done = 0; done < CALLS; done += IN_FLIGHT) {
    await Promise.all(
      Array.from(
        { length: IN_FLIGHT },
        (_, i) =>
          new Promise((resolve, reject) => {
            // What requireBearer reads of a request: the header, and the URL (no token in its query).
            const req = {
              method: 'GET',
              baseUrl: '',
              originalUrl: '/v1/realms',
              headers: { authorization: `Bearer ${fillerTokenFor((done + i) % TOKENS)}` },
            };
            const res = {
              locals: {},
              status: () => reject(new Error('the token was refused')),
            };
            step(req, res, resolve);
          }),
      ),
    );
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / CALLS;
}

const results = Object.fromEntries(Object.keys(steps).map((name) => [name, []]));
for (let round = 0; round < 5; round++) {
  for (const [name, step] of Object.entries(steps)) results[name].push(await measure(step));
}
for (const [name, values] of Object.entries(results)) {
  console.log(`${name.padEnd(14)} ${values.map((v) => v.toFixed(2)).join(', ')} µs CPU per call`);
}
