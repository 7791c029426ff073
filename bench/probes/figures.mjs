/**
 * In-process probe, not a contender: what recording the figures (issue 41: `metricsRouter`, which
 * subscribes to the server's events and tracing channels) adds to a `requireBearer` call without
 * HTTP, over `memoryStorage()` with 1,000 stored tokens, 50 calls in flight at a time. Rounds with
 * the recording off and on take turns, so a busy spell of a shared machine falls on both.
 *
 *   node bench/probes/figures.mjs
 *
 * Prints CPU microseconds per call off and on, each round's difference, and their medians.
 */
import { requireBearer } from 'openid-oauth-bridge';
import { metricsRouter } from 'openid-oauth-bridge/observability';
import { bearerOnlyServer, cpuPerBearerCall } from '../lib/bearer-only.mjs';
import { fillerTokenFor, SCOPE } from '../lib/fixtures.mjs';

const TOKENS = 1000;
const CALLS = 200_000;
const IN_FLIGHT = 50;
const ROUNDS = Number(process.env.ROUNDS ?? 10);

const server = await bearerOnlyServer(Array.from({ length: TOKENS }, (_, i) => fillerTokenFor(i)));
const guard = requireBearer(server, { scopes: [SCOPE] });

/** CPU microseconds per call of the guard (lib/bearer-only.mjs). */
const measure = () => cpuPerBearerCall(guard, { calls: CALLS, inFlight: IN_FLIGHT, tokens: TOKENS });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const off = [];
const on = [];
await measure(); // warm-up
for (let round = 0; round < ROUNDS; round++) {
  // Each round in the other order than the last.
  const order = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
  for (const which of order) {
    if (which === 'off') {
      off.push(await measure());
      continue;
    }
    const figures = metricsRouter(server);
    on.push(await measure());
    figures.stop();
  }
}
const differences = on.map((value, i) => value - off[i]);
console.log(`off  ${off.map((v) => v.toFixed(2)).join(', ')} µs CPU per call`);
console.log(`on   ${on.map((v) => v.toFixed(2)).join(', ')} µs CPU per call`);
console.log(
  `medians: off ${median(off).toFixed(2)} µs, on ${median(on).toFixed(2)} µs; ` +
    `added per call (median of the rounds' differences) ${median(differences).toFixed(2)} µs`,
);
