/**
 * In-process probe, not a contender: what per-app usage adds to `requireBearer`, the request it
 * is counted on most. Two servers over `memoryStorage()` with the same 1,000 stored tokens, one
 * with `usage: false`, one with usage on (the default); 50 calls in flight at a time, as the
 * bench's 50 connections. Each round of the server with usage ends with `server.usage.flush()`,
 * inside the time measured, so the batch write is paid for too.
 *
 *   npm run build && node bench/probes/usage.mjs
 *
 * Prints CPU microseconds per call for each, 7 rounds taken in turn, their medians and the ratio.
 */
import { requireBearer } from 'openid-oauth-bridge';
import { bearerOnlyServer, cpuPerBearerCall } from '../lib/bearer-only.mjs';
import { fillerTokenFor, SCOPE } from '../lib/fixtures.mjs';

const TOKENS = 1000;
const CALLS = 200_000;
const IN_FLIGHT = 50;
const ROUNDS = 7;

const plaintexts = Array.from({ length: TOKENS }, (_, i) => fillerTokenFor(i));
const off = await bearerOnlyServer(plaintexts, { usage: false });
const on = await bearerOnlyServer(plaintexts);
if (off.usage !== undefined || on.usage === undefined) throw new Error('usage is not off and on as asked');

/** CPU microseconds per call of `server`'s requireBearer, its usage flushed at the end (lib/bearer-only.mjs). */
const measure = (server) =>
  cpuPerBearerCall(requireBearer(server, { scopes: [SCOPE] }), {
    calls: CALLS,
    inFlight: IN_FLIGHT,
    tokens: TOKENS,
    after: async () => server.usage?.flush(),
  });

const results = { 'usage off': [], 'usage on': [] };
for (let round = 0; round < ROUNDS; round++) {
  results['usage off'].push(await measure(off));
  results['usage on'].push(await measure(on));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, values] of Object.entries(results)) {
  console.log(
    `${name.padEnd(10)} ${values.map((v) => v.toFixed(2)).join(', ')} µs CPU per call (median ${median(values).toFixed(2)})`,
  );
}
const ratio = median(results['usage on']) / median(results['usage off']);
console.log(
  `usage on ÷ off: ${ratio.toFixed(3)} (${((ratio - 1) * 100).toFixed(1)} % more CPU per bearer call)`,
);
const [written] = await on.storage.usage.counts({ clientId: 'bench-client', since: '1970-01-01' });
console.log(`written: ${written.count} bearer uses of bench-client (${ROUNDS * CALLS} made)`);
