/**
 * `npm run soak`: a bounded soak of mixed traffic across two app instances (child processes) on
 * one PostgreSQL database, as behind a load balancer that sends each request to either.
 *
 * Traffic, from SOAK_CONCURRENCY workers (default 8) for SOAK_SECONDS (default 120):
 * authorization code flows (login at the development provider, consent, code exchange; a
 * returning user skips both), implicit flows, refreshes, API calls with issued tokens, discovery,
 * and API calls with unknown tokens; every 10 s the expired rows are pruned meanwhile.
 *
 * It checks: no 5xx and no unexpected status; every access token issued still works at the end,
 * and every refresh token is still stored; the instances' memory (heap after a GC, and RSS) is
 * flat after the warm-up; their PostgreSQL connections stay within the pools; both exit cleanly
 * on SIGTERM. Then it prints its figures. Exit code 1 on any failure.
 *
 * The database is TEST_POSTGRES_URL (default postgres://root@127.0.0.1:5432/test), in a schema of
 * its own, dropped at the end.
 *
 * Options (issue 21's "many instances"): SOAK_INSTANCES (default 2) app instances; SOAK_REDIS_URL
 * puts their ephemeral state on that Redis (`redisEphemeralStore`, under a key prefix of this run,
 * removed at the end) instead of PostgreSQL. Compare `SOAK_INSTANCES=1` with `2` at the same
 * SOAK_CONCURRENCY for throughput: the figures print requests per second and each instance's CPU.
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createClient } from 'redis';
import { hashSecret } from '../../src/crypto/secrets.js';
import { connectStorage, registerClient } from '../../src/index.js';
import { startDevelopmentProvider } from '../../src/testing/index.js';
import {
  dropSchema,
  POSTGRES_URL,
  postgresAvailability,
  postgresUrlFor,
  uniqueSchema,
} from '../support/databases.js';
import { Browser, firstForm, firstLink, signInAtDevelopmentProvider } from '../support/browser.js';
import { startInstance, type Instance } from '../support/instances.js';

const SECONDS = positive('SOAK_SECONDS', 120);
const CONCURRENCY = positive('SOAK_CONCURRENCY', 8);
const INSTANCES = positive('SOAK_INSTANCES', 2);
const REDIS_URL = process.env.SOAK_REDIS_URL;
/** This run's Redis keys, all removed at the end. */
const REDIS_PREFIX = `oob-soak-${process.pid}:`;
const USERS = 40;
const BASE_URL = 'http://127.0.0.1:1'; // what both instances call themselves: the "load balancer"
const CODE_REDIRECT = 'https://client.example/cb';
const IMPLICIT_REDIRECT = 'https://spa.example/app';
/** The default pool of each instance (connectStorage's maxConnections). */
const POOL = 10;
/** Memory is flat if it grows less than this between the first and the last quarter after warm-up. */
const MAX_HEAP_GROWTH = { mb: 8, ratio: 0.25 };
const MAX_RSS_GROWTH = { mb: 40, ratio: 0.3 };

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

// --- What happened --------------------------------------------------------------------------

const statuses = new Map<string, Map<number, number>>();
const latencies = new Map<string, number[]>();
const failures: string[] = [];
let failureCount = 0;

function fail(message: string): void {
  failureCount += 1;
  if (failures.length < 20) failures.push(message);
}

/** Records an answer and whether it was the one expected. */
async function check(kind: string, res: Response, ms: number, expected: readonly number[]): Promise<boolean> {
  const byStatus = statuses.get(kind) ?? new Map<number, number>();
  byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
  statuses.set(kind, byStatus);
  (latencies.get(kind) ?? latencies.set(kind, []).get(kind)!).push(ms);
  if (expected.includes(res.status)) return true;
  const text = await res.text().catch(() => '');
  const said = /<p>([^<]*)<\/p>/.exec(text)?.[1] ?? text.slice(0, 200);
  fail(`${kind}: ${res.status} where ${expected.join(' or ')} was expected: ${said}`);
  return false;
}

async function timed(
  kind: string,
  expected: readonly number[],
  send: () => Promise<Response>,
): Promise<Response | null> {
  const started = performance.now();
  let res: Response;
  try {
    res = await send();
  } catch (err) {
    fail(`${kind}: request failed: ${(err as Error).message}`);
    return null;
  }
  return (await check(kind, res, performance.now() - started, expected)) ? res : null;
}

// --- The deployment ---------------------------------------------------------------------------

const postgres = await postgresAvailability();
if (!postgres.ok) {
  console.log(`SOAK NOT RUN: ${postgres.reason}`);
  process.exit(process.env.CI ? 1 : 0);
}

const schema = uniqueSchema('soak');
const databaseUrl = postgresUrlFor(schema);
const op = await startDevelopmentProvider();
const storage = await connectStorage(databaseUrl, { migrate: true, applicationName: 'oob-soak' });
const codeClient = await registerClient(storage, {
  applicationName: 'Soak printer',
  redirectUri: CODE_REDIRECT,
  scopes: ['realms'],
});
const implicitClient = await registerClient(storage, {
  applicationName: 'Soak SPA',
  redirectUri: IMPLICIT_REDIRECT,
  grantType: 'implicit',
  scopes: ['realms'],
});
const config = {
  databaseUrl,
  // The soak's own instance script (Redis for ephemeral state when asked), started by
  // startInstance: node runs the first script on its command line, this one.
  nodeArgs: [
    '--expose-gc',
    '--import',
    'tsx',
    fileURLToPath(new URL('../support/instance-process.ts', import.meta.url)),
  ],
  baseUrl: BASE_URL,
  providers: [{ name: 'Development provider', identifier: op.identifier }],
  sessionSecret: 'the soak session secret, shared by both instances',
  // Its own application_name: other tests may use the same database meanwhile.
  env: {
    EXPOSE_STATS: '1',
    APPLICATION_NAME: `oob-soak-${process.pid}`,
    ...(REDIS_URL ? { INSTANCE_REDIS_URL: REDIS_URL, INSTANCE_REDIS_PREFIX: REDIS_PREFIX } : {}),
  },
};
const instances: Instance[] = await Promise.all(
  Array.from({ length: INSTANCES }, () => startInstance(config)),
);
// Should the soak die halfway, leave no instance running (its schema, oob_soak_*, stays behind).
process.once('exit', () => {
  for (const instance of instances) instance.process.kill('SIGKILL');
});
let turn = 0;
/** Round robin, as a load balancer would. */
const next = (): Instance => instances[turn++ % instances.length]!;

const accessTokens: string[] = [];
const refreshTokens: string[] = [];
const browsers = new Map<string, Browser>();

// --- Traffic ----------------------------------------------------------------------------------

/** Follows an authorization request to the redirect back to the client. */
async function authorize(user: string, query: Record<string, string>, kind: string): Promise<URL | null> {
  let browser = browsers.get(`${kind}:${user}`);
  if (!browser) browsers.set(`${kind}:${user}`, (browser = new Browser(BASE_URL)));
  const url = `/oauth/authorize?${new URLSearchParams(query)}`;
  const start = await timed(`${kind} authorize`, [200, 302], () => browser.request(next().origin, url));
  if (!start) return null;
  let answer = start;
  if (start.status === 200) {
    // The selection page: log in at the provider, then come back (to either instance).
    const login = firstLink(await start.text());
    if (login === null) return (fail(`${kind}: no provider link`), null);
    const toProvider = await timed(`${kind} login`, [302], () => browser.request(next().origin, login));
    if (!toProvider) return null;
    const callback = await signInAtDevelopmentProvider(toProvider.headers.get('location')!, user);
    const loggedIn = await timed(`${kind} callback`, [303], () => browser.request(next().origin, callback));
    if (!loggedIn) return null;
    await loggedIn.body?.cancel();
    // Post/redirect/get: the resumed request shows the consent page or redirects to the client.
    const resumed = loggedIn.headers.get('location')!;
    const back = await timed(`${kind} resume`, [200, 302], () => browser.request(next().origin, resumed));
    if (!back) return null;
    answer = back;
    if (back.status === 200) {
      const form = firstForm(await back.text());
      if (form === null) return (fail(`${kind}: consent page without a form`), null);
      const decided = await timed(`${kind} consent`, [303], () =>
        browser.request(next().origin, form.action, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: BASE_URL },
          body: new URLSearchParams({ ...form.fields, decision: 'allow' }),
        }),
      );
      if (!decided) return null;
      answer = decided;
    }
  } else {
    await start.body?.cancel();
  }
  const location = answer.headers.get('location');
  if (location === null) return (fail(`${kind}: no redirect to the client`), null);
  return new URL(location);
}

async function codeFlow(user: string): Promise<void> {
  const back = await authorize(
    user,
    { response_type: 'code', client_id: codeClient.clientId, redirect_uri: CODE_REDIRECT, state: 's' },
    'code flow',
  );
  const code = back?.searchParams.get('code');
  if (!code) return void (back && fail('code flow: no code in the redirect'));
  const res = await timed('token (code)', [200], () =>
    fetch(`${next().origin}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CODE_REDIRECT,
        client_id: codeClient.clientId,
        client_secret: codeClient.clientSecret!,
      }),
    }),
  );
  if (!res) return;
  const body = (await res.json()) as { access_token: string; refresh_token: string };
  accessTokens.push(body.access_token);
  refreshTokens.push(body.refresh_token);
  await callApi(body.access_token);
}

async function implicitFlow(user: string): Promise<void> {
  const back = await authorize(
    user,
    {
      response_type: 'token',
      client_id: implicitClient.clientId,
      redirect_uri: IMPLICIT_REDIRECT,
      state: 's',
    },
    'implicit flow',
  );
  if (!back) return;
  const token = new URLSearchParams(back.hash.slice(1)).get('access_token');
  if (!token) return fail('implicit flow: no access_token in the fragment');
  accessTokens.push(token);
  await callApi(token);
}

async function refresh(): Promise<void> {
  const token = pick(refreshTokens);
  if (token === undefined) return;
  const res = await timed('token (refresh)', [200], () =>
    fetch(`${next().origin}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: token,
        redirect_uri: CODE_REDIRECT,
        client_id: codeClient.clientId,
        client_secret: codeClient.clientSecret!,
      }),
    }),
  );
  if (res) accessTokens.push(((await res.json()) as { access_token: string }).access_token);
}

async function callApi(token = pick(accessTokens)): Promise<void> {
  if (token === undefined) return;
  const res = await timed('api', [200], () =>
    fetch(`${next().origin}/v1/realms`, { headers: { authorization: `Bearer ${token}` } }),
  );
  await res?.body?.cancel();
}

async function unknownToken(): Promise<void> {
  const res = await timed('api (unknown token)', [401], () =>
    fetch(`${next().origin}/v1/realms`, { headers: { authorization: `Bearer not-a-token-${turn}` } }),
  );
  await res?.body?.cancel();
}

async function discovery(): Promise<void> {
  const res = await timed('discovery', [200], () => fetch(`${next().origin}/`));
  await res?.body?.cancel();
}

function pick<T>(list: readonly T[]): T | undefined {
  return list.length === 0 ? undefined : list[Math.floor(Math.random() * list.length)];
}

/**
 * One request or flow, weighted as a busy deployment's mix might be. Each worker has users of its
 * own, so no two flows share a browser at once (as two tabs racing would).
 */
async function oneStep(worker: number): Promise<void> {
  const user = `user${worker + CONCURRENCY * Math.floor(Math.random() * Math.ceil(USERS / CONCURRENCY))}`;
  const roll = Math.random();
  if (roll < 0.2 || accessTokens.length === 0) return codeFlow(user);
  if (roll < 0.25) return implicitFlow(user);
  if (roll < 0.4) return refresh();
  if (roll < 0.85) return callApi();
  if (roll < 0.9) return unknownToken();
  return discovery();
}

// --- Watching -----------------------------------------------------------------------------------

interface Sample {
  at: number;
  rss: number;
  heapUsed: number;
}
const memory: Sample[][] = instances.map(() => []);
/** Each instance's CPU time (user + system, µs) at the start and the end of the traffic. */
const cpuAt: { start?: number; end?: number }[] = instances.map(() => ({}));
const connections: number[] = [];
const admin = new pg.Client({ connectionString: POSTGRES_URL });
await admin.connect();

async function sample(started: number): Promise<void> {
  await Promise.all(
    instances.map(async (instance, index) => {
      const stats = (await (await fetch(`${instance.origin}/__stats`)).json()) as Sample & {
        cpu: { user: number; system: number };
      };
      memory[index]!.push({ at: Date.now() - started, rss: stats.rss, heapUsed: stats.heapUsed });
      const cpu = stats.cpu.user + stats.cpu.system;
      cpuAt[index]!.start ??= cpu;
      cpuAt[index]!.end = cpu;
    }),
  );
  const rows = await admin.query<{ n: number }>(
    'select count(*)::int as n from pg_stat_activity where application_name = $1',
    [`oob-soak-${process.pid}`],
  );
  connections.push(rows.rows[0]!.n);
}

// --- Run --------------------------------------------------------------------------------------

console.log(
  `soak: ${SECONDS} s, ${CONCURRENCY} workers, ${INSTANCES} instance(s) on PostgreSQL (schema ${schema})` +
    `${REDIS_URL ? `, ephemeral state on Redis ${REDIS_URL} (prefix ${REDIS_PREFIX})` : ''}, ${USERS} users`,
);
/** The machine's busy and total CPU ticks so far (/proc/stat), to tell how much else ran. */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - fields[3]! - (fields[4] ?? 0), total };
}
const machineBefore = machineTicks();
const driverBefore = process.cpuUsage();
const started = Date.now();
const deadline = started + SECONDS * 1000;
let steps = 0;
let pruned = 0;
const watcher = (async () => {
  let lastPrune = Date.now();
  while (Date.now() < deadline) {
    await sample(started);
    if (Date.now() - lastPrune >= 10_000) {
      const removed = await storage.prune(Date.now());
      pruned += Object.values(removed).reduce((a, b) => a + b, 0);
      lastPrune = Date.now();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(5000, Math.max(0, deadline - Date.now()))));
  }
  await sample(started);
})();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async (_, worker) => {
    while (Date.now() < deadline) {
      await oneStep(worker).catch((err: unknown) => fail(`step threw: ${(err as Error).message}`));
      steps += 1;
    }
  }),
);
await watcher;
const trafficSeconds = (Date.now() - started) / 1000;
const driverCpu = process.cpuUsage(driverBefore);
const machineAfter = machineTicks();

// Every access token issued still works (at either instance); every refresh token is stored.
let invalidAccess = 0;
const verifyStarted = Date.now();
for (let i = 0; i < accessTokens.length; i += 32) {
  await Promise.all(
    accessTokens.slice(i, i + 32).map(async (token, j) => {
      const res = await fetch(`${instances[j % instances.length]!.origin}/v1/realms`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.body?.cancel();
      if (res.status !== 200) invalidAccess += 1;
    }),
  );
}
let missingRefresh = 0;
for (const token of new Set(refreshTokens)) {
  const found = await storage.tokens.find(hashSecret(token));
  if (found === null || found.token.type !== 'refresh_token') missingRefresh += 1;
}
if (invalidAccess > 0) fail(`${invalidAccess} of ${accessTokens.length} issued access tokens no longer work`);
if (missingRefresh > 0) fail(`${missingRefresh} issued refresh tokens are gone`);
const verifySeconds = (Date.now() - verifyStarted) / 1000;

// Memory: the first quarter after warm-up against the last quarter.
const warmUpMs = Math.max(10_000, (SECONDS * 1000) / 4);
const memoryRows = memory.map((samples, index) => {
  const steady = samples.filter((s) => s.at >= warmUpMs);
  const quarter = Math.max(1, Math.floor(steady.length / 4));
  const first = steady.slice(0, quarter);
  const last = steady.slice(-quarter);
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  const row = {
    instance: String.fromCharCode(65 + index),
    samples: steady.length,
    heapStart: median(first.map((s) => s.heapUsed)),
    heapEnd: median(last.map((s) => s.heapUsed)),
    rssStart: median(first.map((s) => s.rss)),
    rssEnd: median(last.map((s) => s.rss)),
  };
  const grew = (from: number, to: number, limit: { mb: number; ratio: number }) =>
    to - from > Math.max(limit.mb * 2 ** 20, from * limit.ratio);
  if (steady.length < 2)
    fail(`instance ${row.instance}: too few memory samples (run longer than ${warmUpMs / 1000} s)`);
  else {
    if (grew(row.heapStart, row.heapEnd, MAX_HEAP_GROWTH)) fail(`instance ${row.instance}: heap grew`);
    if (grew(row.rssStart, row.rssEnd, MAX_RSS_GROWTH)) fail(`instance ${row.instance}: RSS grew`);
  }
  return row;
});
const maxConnections = Math.max(...connections);
if (maxConnections > INSTANCES * POOL) fail(`${maxConnections} connections, more than the pools allow`);

// Both instances shut down gracefully.
const exits = await Promise.all(
  instances.map(async (instance) => {
    const exit = once(instance.process, 'exit') as Promise<[number | null, string | null]>;
    const signalled = Date.now();
    instance.process.kill('SIGTERM');
    const [code, signal] = await exit;
    return { code, signal, ms: Date.now() - signalled };
  }),
);
for (const exit of exits) {
  if (exit.code !== 0) fail(`an instance exited with ${exit.code ?? exit.signal} on SIGTERM`);
}

await admin.end();
await storage.close();
if (REDIS_URL) {
  const redis = await createClient({ url: REDIS_URL }).connect();
  for await (const keys of redis.scanIterator({ MATCH: `${REDIS_PREFIX}*`, COUNT: 1000 })) {
    if (keys.length > 0) await redis.unlink(keys);
  }
  await redis.close();
}
await op.close();
await dropSchema(schema);

// --- Figures ----------------------------------------------------------------------------------

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const percentile = (values: number[], p: number) =>
  values.length === 0
    ? NaN
    : [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const requests = [...statuses.values()].reduce(
  (sum, m) => sum + [...m.values()].reduce((a, b) => a + b, 0),
  0,
);
const fiveHundreds = [...statuses.values()].reduce(
  (sum, m) => sum + [...m].filter(([status]) => status >= 500).reduce((a, [, n]) => a + n, 0),
  0,
);

console.log(
  `\ntraffic: ${trafficSeconds.toFixed(0)} s, ${steps} steps, ${requests} requests to the instances (${(requests / trafficSeconds).toFixed(0)}/s), ${fiveHundreds} 5xx`,
);
console.log('\nkind                         requests  statuses                 p50 ms  p95 ms  max ms');
for (const [kind, byStatus] of [...statuses].sort(([a], [b]) => a.localeCompare(b))) {
  const times = latencies.get(kind) ?? [];
  const count = [...byStatus.values()].reduce((a, b) => a + b, 0);
  const spread = [...byStatus].map(([status, n]) => `${status}:${n}`).join(' ');
  console.log(
    `${kind.padEnd(28)} ${String(count).padStart(8)}  ${spread.padEnd(23)} ${percentile(times, 0.5).toFixed(1).padStart(7)} ${percentile(times, 0.95).toFixed(1).padStart(7)} ${percentile(times, 1).toFixed(1).padStart(7)}`,
  );
}
const cpuShares = cpuAt.map((c, i) => {
  const seconds = ((c.end ?? 0) - (c.start ?? 0)) / 1e6;
  return `${String.fromCharCode(65 + i)} ${((seconds / trafficSeconds) * 100).toFixed(0)} % of a core`;
});
const machine = (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total);
const driverShare = (driverCpu.user + driverCpu.system) / 1e6 / trafficSeconds;
console.log(
  `machine during the traffic: ${(machine * 100).toFixed(0)} % of its ${availableParallelism()} cores busy (anything running); ` +
    `this driver ${(driverShare * 100).toFixed(0)} % of a core; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
);
console.log(
  `instances' CPU during the traffic: ${cpuShares.join(', ')} (the cores are shared with the driver, PostgreSQL${REDIS_URL ? ', Redis' : ''})`,
);
console.log(
  `\ntokens: ${accessTokens.length} access tokens issued, ${accessTokens.length - invalidAccess} still valid; ${new Set(refreshTokens).size} refresh tokens, ${new Set(refreshTokens).size - missingRefresh} still stored (checked in ${verifySeconds.toFixed(1)} s)`,
);
console.log(`pruned meanwhile: ${pruned} rows`);
console.log(
  `PostgreSQL connections of the instances: max ${maxConnections}, last ${connections.at(-1)} (${INSTANCES} pools of ${POOL})`,
);
console.log(
  `\nmemory after warm-up (${warmUpMs / 1000} s), median of the first and of the last quarter, after a GC:`,
);
for (const row of memoryRows) {
  console.log(
    `  ${row.instance}: heap ${mb(row.heapStart)} -> ${mb(row.heapEnd)} (${(((row.heapEnd - row.heapStart) / row.heapStart) * 100).toFixed(1)}%), RSS ${mb(row.rssStart)} -> ${mb(row.rssEnd)} (${(((row.rssEnd - row.rssStart) / row.rssStart) * 100).toFixed(1)}%), ${row.samples} samples`,
  );
}
console.log(
  `shutdown on SIGTERM: ${exits.map((e, i) => `${String.fromCharCode(65 + i)} exit ${e.code ?? e.signal} in ${e.ms} ms`).join(', ')}`,
);

if (failureCount > 0) {
  console.log(`\nSOAK FAILED: ${failureCount} problem(s)`);
  for (const message of failures) console.log(`  - ${message}`);
  process.exit(1);
}
console.log('\nsoak passed');
