/**
 * In-process probe, not a contender: the lower bound of each workload's storage work. For each
 * workload it runs exactly what one request must read and write, on the library's own schema
 * (migrations run by `connectStorage`), the fastest way each engine allows, and nothing else:
 *
 * - SQLite (`better-sqlite3`, WAL, `synchronous = NORMAL` as `connectStorage` sets them):
 *   prepared statements, the writes of one request in one transaction.
 * - PostgreSQL (`pg`): one round trip per request, a single named prepared statement whose CTEs
 *   do all of the request's reads and writes; 10 connections in flight, as the library's pool.
 *
 * The work per request is `lib/probe-work.mjs`'s (hashes computed beforehand). On PostgreSQL it
 * also times `codeTwoTrips`, the code exchange's work in two round trips (reads, then the writes
 * and the `replace` that commits).
 *
 *   node bench/probes/bounds.mjs            # a table
 *   node bench/probes/bounds.mjs --json     # {"sqlite":{"realms":µs,…},"postgres":{…}} (run.mjs)
 *   node bench/probes/bounds.mjs --sqlite-only --tokens 1000,1000000
 *                                           # SQLite's own growth: the probe over each token count
 *
 * Prints server CPU microseconds per request (user + system of this process). Bound = this +
 * the memory adapter's CPU per request, measured in the same run (`bench/run.mjs`).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { inputs, postgresWork, sqliteWork } from '../lib/probe-work.mjs';

const { values: args } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    iterations: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '1000' },
    'sqlite-only': { type: 'boolean', default: false },
  },
});
const ITERATIONS = Number(args.iterations);
const ROUNDS = Number(args.rounds);
const WORKLOADS = ['realms', 'refresh', 'code', 'authorize'];
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
const CONNECTIONS = 10;

function cpuMicros(start) {
  const { user, system } = process.cpuUsage(start);
  return user + system;
}

async function sqliteProbe(stored = 1000) {
  const { work, seedCodes, close } = await sqliteWork(stored);
  const result = {};
  try {
    for (const workload of WORKLOADS) {
      const turns = [];
      for (let round = 0; round < ROUNDS; round++) {
        const batch = inputs(ITERATIONS);
        if (workload === 'code') seedCodes(batch);
        const start = process.cpuUsage();
        for (let n = 0; n < ITERATIONS; n++) work[workload](batch[n], n);
        turns.push(cpuMicros(start) / ITERATIONS);
      }
      result[workload] = median(turns);
    }
  } finally {
    close();
  }
  return result;
}

/** Each workload in its one round trip, and `codeTwoTrips`: the code exchange in two. */
async function postgresProbe() {
  const { statements, clients, seedCodes, close } = await postgresWork({
    url: POSTGRES_URL,
    connections: CONNECTIONS,
  });
  const result = {};
  try {
    for (const workload of [...WORKLOADS, 'codeTwoTrips']) {
      const steps = [statements[workload]].flat();
      const turns = [];
      for (let round = 0; round < ROUNDS; round++) {
        const batch = inputs(ITERATIONS);
        if (workload.startsWith('code')) await seedCodes(batch);
        let next = 0;
        const start = process.cpuUsage();
        await Promise.all(
          clients.map(async (client) => {
            while (next < ITERATIONS) {
              const n = next++;
              for (let s = 0; s < steps.length; s++) {
                const { text, values } = steps[s];
                await client.query({ name: `bounds-${workload}-${s}`, text, values: values(batch[n], n) });
              }
            }
          }),
        );
        turns.push(cpuMicros(start) / ITERATIONS);
      }
      result[workload] = median(turns);
    }
  } finally {
    await close();
  }
  return result;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

if (args['sqlite-only']) {
  const counts = args.tokens.split(',').map(Number);
  const measured = [];
  for (const count of counts) measured.push(await sqliteProbe(count));
  console.log(
    `| workload | ${counts.map((c) => `SQLite probe, ${c.toLocaleString('en')} tokens, CPU µs/req`).join(' | ')} | last ÷ first |`,
  );
  console.log(`|---|${counts.map(() => '---:').join('|')}|---:|`);
  for (const workload of WORKLOADS) {
    const values = measured.map((m) => m[workload]);
    console.log(
      `| ${workload} | ${values.map((v) => v.toFixed(1)).join(' | ')} | ${(values.at(-1) / values[0]).toFixed(3)} |`,
    );
  }
  process.exit(0);
}
const result = { sqlite: await sqliteProbe(Number(args.tokens)) };
if (await postgresReachable()) result.postgres = await postgresProbe();
if (args.json) {
  console.log(JSON.stringify(result));
} else {
  console.log('| workload | SQLite probe CPU µs/req | PostgreSQL probe CPU µs/req |');
  console.log('|---|---:|---:|');
  for (const workload of WORKLOADS) {
    const pgValue = result.postgres?.[workload];
    console.log(
      `| ${workload} | ${result.sqlite[workload].toFixed(1)} | ${pgValue === undefined ? 'not reachable' : pgValue.toFixed(1)} |`,
    );
  }
  const twoTrips = result.postgres?.codeTwoTrips;
  if (twoTrips !== undefined) console.log(`| code, in two round trips | | ${twoTrips.toFixed(1)} |`);
}
