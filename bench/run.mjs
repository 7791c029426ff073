/**
 * `npm run bench`: each contender in its own process, pinned to one core, under load from
 * autocannon in this process, pinned to another. Every response is checked (a single wrong one
 * voids the row); the server's CPU time per request is read from /proc. Prints a Markdown table.
 *
 *   node bench/run.mjs [--duration 10] [--warmup 3] [--connections 50]
 *                      [--workloads realms,refresh,code,authorize] [--contenders express,library-memory,…]
 *                      [--tokens 1000] [--codes 250000] [--rounds 1] [--interleave [--sessions 1]] [--baseline express]
 *   node bench/run.mjs --scale [--workloads realms,code]   (or bench/scale.mjs) 1,000 vs 1,000,000 tokens
 *   node bench/run.mjs --soak 300 [--workloads realms,refresh,code,authorize] [--sample 10]
 *                                                          server RSS under full load, sampled every 10 s
 *
 * See bench/README.md for what the rows mean and the last results.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { clearInterval, setInterval } from 'node:timers';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  ACCESS_TOKEN,
  authorizeQuery,
  basicAuth,
  CLIENT_ID,
  CLIENT_SECRET,
  codeFor,
  fillerTokenFor,
  REALMS,
  REDIRECT_URI,
  REFRESH_TOKEN,
  STATE,
} from './lib/fixtures.mjs';

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    workloads: { type: 'string' },
    contenders: { type: 'string' },
    tokens: { type: 'string' },
    codes: { type: 'string', default: '250000' },
    scale: { type: 'boolean', default: false },
    soak: { type: 'string' },
    sample: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    interleave: { type: 'boolean', default: false },
    sessions: { type: 'string', default: '1' },
    baseline: { type: 'string' },
  },
});

const here = new URL('.', import.meta.url);
const SERVER_CORE = '0';
const LOAD_CORE = '1';
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
/** Counted before this process pins itself to one core, which availableParallelism() would see. */
const CORES = availableParallelism();

/**
 * The contenders; `baseline` is the row every other row of a workload is compared with. `bound`
 * marks a stub doing the bounds probe's storage work for `engine` (its probe figure is that of
 * `probe`, by default the workload's); `workloads` limits a contender to those workloads.
 */
const CONTENDERS = [
  { id: 'express', label: 'bare Express 5 / stub', file: 'express.mjs', baseline: true },
  {
    id: 'library-memory',
    label: 'openid-oauth-bridge, memory',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory' },
  },
  {
    id: 'library-sqlite',
    label: 'openid-oauth-bridge, SQLite',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'sqlite' },
  },
  {
    id: 'library-postgres',
    label: 'openid-oauth-bridge, PostgreSQL',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'postgres' },
    needsPostgres: true,
  },
  { id: 'oauth2orize', label: 'oauth2orize 1.12 + passport', file: 'oauth2orize.mjs' },
  { id: 'oauth2-server', label: '@node-oauth/oauth2-server 5', file: 'node-oauth2-server.mjs' },
  { id: 'oidc-provider', label: 'oidc-provider 9 (Koa, in Express)', file: 'oidc-provider.mjs' },
  // Only when asked for by id: a control and the library's parts, for `GET /v1/realms`.
  {
    id: 'express-again',
    label: 'bare Express 5 / stub, again (A/A control)',
    file: 'express.mjs',
    optional: true,
  },
  {
    id: 'express-hash',
    label: 'bare Express 5 + SHA-256 of the token',
    file: 'express-parts.mjs',
    env: { BENCH_PART: 'hash' },
    optional: true,
  },
  {
    id: 'express-bearer',
    label: 'bare Express 5 + requireBearer (memory)',
    file: 'express-parts.mjs',
    env: { BENCH_PART: 'bearer' },
    optional: true,
  },
  {
    id: 'library-sqlite-mmap',
    label: 'openid-oauth-bridge, SQLite, mmap_size 1 GiB (own handle)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'sqlite', BENCH_SQLITE_PRAGMAS: 'mmap_size = 1073741824' },
    optional: true,
  },
  {
    id: 'library-sqlite-cache512',
    label: 'openid-oauth-bridge, SQLite, cache_size 512 MiB (own handle)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'sqlite', BENCH_SQLITE_PRAGMAS: 'cache_size = -524288' },
    optional: true,
  },
  {
    id: 'bound-sqlite',
    label: "stub + the SQLite probe's work (the bound, served)",
    file: 'bound.mjs',
    env: { BENCH_STORAGE: 'sqlite' },
    bound: { engine: 'sqlite' },
    optional: true,
  },
  {
    id: 'bound-postgres',
    label: "stub + the PostgreSQL probe's work (the bound, served)",
    file: 'bound.mjs',
    env: { BENCH_STORAGE: 'postgres' },
    bound: { engine: 'postgres' },
    needsPostgres: true,
    optional: true,
  },
  {
    id: 'bound-postgres-2trips',
    label: "stub + the PostgreSQL probe's work, the code exchange in two round trips",
    file: 'bound.mjs',
    env: { BENCH_STORAGE: 'postgres', BENCH_BOUND_TRIPS: '2' },
    bound: { engine: 'postgres', probe: 'codeTwoTrips' },
    needsPostgres: true,
    optional: true,
    workloads: ['code'],
  },
  // OpenID Connect (issue 30): the code exchange with `openid`, an ID token signed per exchange.
  {
    id: 'library-memory-oidc-rs256',
    label: 'openid-oauth-bridge, memory, openid (RS256 ID token)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_OIDC: 'RS256' },
    optional: true,
    workloads: ['code'],
  },
  {
    id: 'library-memory-oidc-es256',
    label: 'openid-oauth-bridge, memory, openid (ES256 ID token)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_OIDC: 'ES256' },
    optional: true,
    workloads: ['code'],
  },
  {
    id: 'oidc-provider-oidc-rs256',
    label: 'oidc-provider 9, openid (RS256 ID token)',
    file: 'oidc-provider.mjs',
    env: { BENCH_OIDC: 'RS256' },
    optional: true,
    workloads: ['code'],
  },
  {
    id: 'oidc-provider-oidc-es256',
    label: 'oidc-provider 9, openid (ES256 ID token)',
    file: 'oidc-provider.mjs',
    env: { BENCH_OIDC: 'ES256' },
    optional: true,
    workloads: ['code'],
  },
  // Resource indicators (issue 39): the realms API a declared resource, its tokens bound to it;
  // and (issue 42) the same resource issuing JWT access tokens (RFC 9068), which requireBearer
  // verifies (RS256) before it reads the token's record.
  ...['memory', 'sqlite', 'postgres'].flatMap((engine) => [
    {
      id: `library-${engine}-resource`,
      label: `openid-oauth-bridge, ${engine === 'sqlite' ? 'SQLite' : engine === 'postgres' ? 'PostgreSQL' : engine}, realms as a declared resource (opaque tokens)`,
      file: 'library.mjs',
      env: { BENCH_STORAGE: engine, BENCH_RESOURCE: '1' },
      optional: true,
      workloads: ['realms'],
      ...(engine === 'postgres' ? { needsPostgres: true } : {}),
    },
    {
      id: `library-${engine}-jwt`,
      label: `openid-oauth-bridge, ${engine === 'sqlite' ? 'SQLite' : engine === 'postgres' ? 'PostgreSQL' : engine}, realms as a declared resource (JWT access tokens, RS256)`,
      file: 'library.mjs',
      env: { BENCH_STORAGE: engine, BENCH_RESOURCE: '1', BENCH_JWT: '1' },
      optional: true,
      workloads: ['realms'],
      ...(engine === 'postgres' ? { needsPostgres: true } : {}),
    },
  ]),
  {
    id: 'library-memory-jwt-es256',
    label: 'openid-oauth-bridge, memory, realms as a declared resource (JWT access tokens, ES256)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_RESOURCE: '1', BENCH_JWT: 'ES256' },
    optional: true,
    workloads: ['realms'],
  },
  // The figures (issue 41): the Prometheus router mounted, every request recorded.
  {
    id: 'library-memory-metrics',
    label: 'openid-oauth-bridge, memory, metricsRouter mounted',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_METRICS: '1' },
    optional: true,
  },
  // One process takes both turns of each pair (with `--baseline library-memory --interleave`): the
  // part named taken out for the baseline's turn and put back for this one's.
  ...[
    ['library-memory-metrics-toggled', 'all', 'metricsRouter mounted'],
    ['library-memory-metrics-toggled-recording', 'recording', 'the figures recorded, no router layer'],
    ['library-memory-metrics-toggled-layer', 'layer', 'a router layer that records nothing'],
    ['library-memory-toggled-channel', 'channel', 'an empty subscriber on the bearer channel'],
    ['library-memory-toggled-again', 'nothing', 'nothing changed (A/A control)'],
  ].map(([id, part, what]) => ({
    id,
    label: `openid-oauth-bridge, memory, same process as its baseline turns, ${what}`,
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_METRICS: 'toggle', BENCH_TOGGLE_PART: part },
    toggle: { off: 'figures:off', on: 'figures:on' },
    optional: true,
  })),
  {
    id: 'library-memory-channel',
    label: 'openid-oauth-bridge, memory, an empty subscriber on the bearer channel',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_METRICS: 'channel' },
    optional: true,
  },
  {
    id: 'library-memory-figures',
    label: 'openid-oauth-bridge, memory, figures recorded, no metricsRouter layer',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_METRICS: 'record' },
    optional: true,
  },
  {
    id: 'library-memory-again',
    label: 'openid-oauth-bridge, memory, again (A/A control)',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory' },
    optional: true,
  },
  {
    id: 'library-unprotected',
    label: 'openid-oauth-bridge, memory, realms without requireBearer',
    file: 'library.mjs',
    env: { BENCH_STORAGE: 'memory', BENCH_UNPROTECTED: '1' },
    optional: true,
  },
];

/**
 * The library's targets from the performance issue, as a share of the baseline's throughput in
 * the same run.
 */
const TARGETS = {
  realms: { 'library-memory': 0.95, 'library-sqlite': 0.85 },
  refresh: { 'library-memory': 0.85, 'library-sqlite': 0.7 },
  code: { 'library-memory': 0.85, 'library-sqlite': 0.7 },
  authorize: { 'library-memory': 0.8 },
};

const WORKLOAD_TITLES = {
  realms: '`GET /v1/realms` with a bearer token',
  refresh: 'token endpoint, `refresh_token`',
  code: 'token endpoint, `authorization_code`',
  authorize: 'authorize, logged in and already trusted (302)',
};

/**
 * `before-memory`, `before-sqlite`, `before-postgres`: the library of another checkout (an older
 * commit, built, with its bench installed), named by BENCH_BEFORE, measured in the same run as
 * this one: `git worktree add /tmp/before <commit>`, then `npm ci && npm run build && npm install
 * --prefix bench` there, then `BENCH_BEFORE=/tmp/before node bench/run.mjs --contenders
 * express,library-memory,before-memory`.
 */
function beforeContender(id) {
  const match = /^before-(memory|sqlite|postgres)$/.exec(id);
  if (!match || !process.env.BENCH_BEFORE) return undefined;
  const storage = match[1];
  return {
    id,
    label: `openid-oauth-bridge before, ${storage}`,
    script: join(process.env.BENCH_BEFORE, 'bench', 'contenders', 'library.mjs'),
    env: { BENCH_STORAGE: storage },
    needsPostgres: storage === 'postgres',
  };
}

function scriptOf(contender) {
  return contender.script ?? new URL(`contenders/${contender.file}`, here).pathname;
}

const postgresUrl = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';

async function main() {
  const pinned = pinSelf();
  const postgres = await postgresReachable();
  // An id that is not a known contender names a file of bench/contenders: for experiments.
  const requested = args.contenders?.split(',') ?? CONTENDERS.filter((c) => !c.optional).map((c) => c.id);
  const selected = requested
    .map(
      (id) =>
        CONTENDERS.find((c) => c.id === id) ?? beforeContender(id) ?? { id, label: id, file: `${id}.mjs` },
    )
    .filter((c) => existsSync(scriptOf(c)));
  for (const c of selected.filter((c) => c.needsPostgres && !postgres.ok)) {
    console.error(`skipping ${c.label}: PostgreSQL at ${postgresUrl} did not answer (${postgres.reason})`);
  }
  const contenders = rebase(selected.filter((c) => !c.needsPostgres || postgres.ok));
  printSetup(pinned);

  if (args.soak !== undefined) return soak(contenders, Number(args.soak));
  if (args.scale) return scale(contenders);

  const tokens = Number(args.tokens ?? 1000);
  const rounds = Number(args.rounds);
  const bounds = contenders.some((c) => c.bound !== undefined || /-(sqlite|postgres)$/.test(c.id))
    ? probeBounds(pinned)
    : {};
  const summary = [];
  for (const workload of (args.workloads ?? 'realms,refresh,code,authorize').split(',')) {
    const measured = await (args.interleave ? measureInterleaved : measureInRounds)(
      contenders.filter((c) => c.workloads === undefined || c.workloads.includes(workload)),
      workload,
      {
        tokens,
        rounds,
      },
    );
    const rows = combineRounds(measured);
    printTable(workload, rows, bounds);
    summary.push({ workload, rows });
  }
  // The peer table and the served bounds are ratios to the stub.
  if (!args.baseline) printPeerTable(summary, bounds);
}

/**
 * `--baseline <id>`: that contender is the row the others are compared with, instead of the stub
 * (`--baseline library-memory --contenders library-memory,library-memory-metrics`: what the
 * figures cost, each turn of one next to a turn of the other). The stub's targets then do not
 * apply; those of {@link TARGETS_VS} do.
 */
function rebase(contenders) {
  if (!args.baseline) return contenders;
  if (!contenders.some((c) => c.id === args.baseline)) {
    throw new Error(`--baseline ${args.baseline} is not one of the contenders (--contenders)`);
  }
  return contenders.map((c) => ({ ...c, baseline: c.id === args.baseline }));
}

/**
 * Targets against another baseline than the stub (`--baseline`), for every workload: issue 41's
 * figures cost at most 3 % of a request on memory storage, mounted at start as a server mounts
 * them (the toggled contenders overstate it: see "One process for both turns" in the README).
 */
const TARGETS_VS = {
  'library-memory': { 'library-memory-metrics': 0.97 },
};

/** The peer table's columns (issue 21), by contender id. */
const PEER_COLUMNS = [
  ['oauth2orize', 'oauth2orize'],
  ['oauth2-server', '@node-oauth'],
  ['oidc-provider', 'oidc-provider'],
  ['library-memory', 'ours, memory'],
  ['library-sqlite', 'ours, SQLite'],
  ['library-postgres', 'ours, PostgreSQL'],
];

const PEER_ROWS = {
  realms: 'W1 bearer',
  refresh: 'W2 refresh',
  code: 'W3 code exchange',
  authorize: 'W4 authorize',
};

/**
 * Issue 21's peer table: each workload a row, each contender its CPU ratio to the stub (baseline
 * CPU µs per request ÷ its own; what one core serves next to the stub), and for SQLite and
 * PostgreSQL the bound (memory row + storage probe) as the same ratio, with the row's CPU ÷ bound.
 */
function printPeerTable(summary, bounds) {
  if (!summary.some(({ rows }) => rows.some((r) => r.contender.baseline && !r.failure))) return;
  const engines = [
    ['sqlite', 'library-sqlite', 'SQLite'],
    ['postgres', 'library-postgres', 'PostgreSQL'],
  ];
  console.log('\n## Peer table: server CPU per request, stub ÷ contender (higher is better)\n');
  console.log(
    `| workload | ${PEER_COLUMNS.map(([, title]) => title).join(' | ')} | ${engines.map(([, , name]) => `bound, ${name} (ours ÷ bound in CPU)`).join(' | ')} |`,
  );
  console.log(`|---|${PEER_COLUMNS.map(() => '---:').join('|')}|${engines.map(() => '---:').join('|')}|`);
  for (const { workload, rows } of summary) {
    const byId = new Map(rows.map((r) => [r.contender.id, r]));
    const baseline = rows.find((r) => r.contender.baseline && !r.failure);
    const cells = PEER_COLUMNS.map(([id]) => {
      const row = byId.get(id);
      if (!row) return '';
      return row.failure ? 'void' : fmt(row.capacity, 2);
    });
    const memory = byId.get('library-memory');
    const boundCells = engines.map(([engine, id]) => {
      const probe = bounds[engine]?.[workload];
      const row = byId.get(id);
      if (probe === undefined || !memory || memory.failure || !baseline) return '';
      const bound = memory.cpuMicros + probe;
      const own = row && !row.failure ? ` (×${fmt(row.cpuMicros / bound, 2)})` : '';
      return `${fmt(baseline.cpuMicros / bound, 2)}${own}`;
    });
    console.log(`| ${PEER_ROWS[workload] ?? workload} | ${cells.join(' | ')} | ${boundCells.join(' | ')} |`);
  }
  printServedBounds(summary, bounds);
  const rounds = summary[0]?.rows.find((r) => r.rounds > 1 && !r.contender.baseline)?.rounds;
  console.log(
    `\n${rounds ? `Medians of ${rounds} ${args.interleave ? 'interleaved turns' : 'rounds'}. ` : 'One round. '}` +
      "A bound ratio is the stub's CPU per request over the bound's; the factor in parentheses is the row's CPU over its bound (issue 21: at most 1.15).",
  );
}

/**
 * With the `bound-*` contenders in the run: what the probe's storage work costs served (the
 * bound row's CPU per request less the stub's) against the probe alone in a loop, and each
 * engine's row against the bound so served (memory row + served work).
 */
function printServedBounds(summary, bounds) {
  const lines = [];
  for (const { workload, rows } of summary) {
    const byId = new Map(rows.filter((r) => !r.failure).map((r) => [r.contender.id, r]));
    const baseline = rows.find((r) => r.contender.baseline && !r.failure);
    if (!baseline) continue;
    // From the paired ratios (each turn against a turn of the stub), in µs of this run's stub:
    // steadier than differences of CPU medians taken at different moments.
    const micros = (row) => baseline.cpuMicros / row.capacity;
    const memory = byId.get('library-memory');
    for (const served of byId.values()) {
      const { bound: of, label } = served.contender;
      if (of === undefined) continue;
      const work = micros(served) - baseline.cpuMicros;
      const probe = bounds[of.engine]?.[of.probe ?? workload];
      const own = byId.get(`library-${of.engine}`);
      const bound = memory ? micros(memory) + work : undefined;
      lines.push(
        `| ${PEER_ROWS[workload] ?? workload} | ${label} | ${probe === undefined ? '' : fmt(probe, 1)} | ${fmt(work, 1)} | ${probe ? `×${fmt(work / probe, 2)}` : ''} | ${bound === undefined ? '' : fmt(bound, 1)} | ${own && bound ? `×${fmt(micros(own) / bound, 2)}` : ''} |`,
      );
    }
  }
  if (lines.length === 0) return;
  console.log("\n## The probe's work served: CPU µs per request, from each row's ratio to the stub\n");
  console.log(
    '| workload | bound row | probe, alone in a loop | the same work served (bound row − stub) | served ÷ alone | memory row + served work | ours ÷ that |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|');
  for (const line of lines) console.log(line);
}

/**
 * The order of `count` contenders in round `round`: each round starts one contender later, so
 * that none is always measured first. With a fixed order the baseline, always first, came out
 * about 5 % ahead of an identical copy of itself measured after it (16 interleaved turns).
 */
function rotation(count, round) {
  return Array.from({ length: count }, (_, i) => (i + round) % count);
}

/**
 * One row per contender from its rounds: the median of each figure, and the median of the
 * per-round ratios to that round's baseline with their range. A contender that failed any round
 * is void.
 */
function combineRounds(measured) {
  const baselineIndex = measured.findIndex((rows) => rows[0].contender.baseline);
  const median = (values) => quantile(values, 0.5);
  return measured.map((rows, i) => {
    const failed = rows.find((r) => r.failure);
    if (failed) return failed;
    const baselines = baselineIndex === -1 ? [] : measured[baselineIndex];
    // An interleaved turn carries the baseline turn taken next to it; rounds pair by number.
    const paired = rows
      .map((r, round) => [r, r.base ?? baselines[round]])
      .filter(([, base]) => base && !base.failure);
    const row = { ...rows[0], rounds: rows.length };
    row.statements = rows.at(-1).statements;
    for (const key of ['requestsPerSecond', 'p50', 'p99', 'cpuMicros', 'coreShare', 'loadShare']) {
      row[key] = median(rows.map((r) => r[key]));
    }
    if (paired.length > 0 && i !== baselineIndex) {
      const capacities = paired.map(([r, base]) => base.cpuMicros / r.cpuMicros);
      row.throughputRatio = median(paired.map(([r, base]) => r.requestsPerSecond / base.requestsPerSecond));
      row.capacity = median(capacities);
      // From QUARTILES_FROM rounds on the middle half, below that the whole range.
      const q = capacities.length >= QUARTILES_FROM ? 0.25 : 0;
      row.capacitySpread = [quantile(capacities, q), quantile(capacities, 1 - q)];
    } else if (i === baselineIndex) {
      row.throughputRatio = 1;
      row.capacity = 1;
    }
    return row;
  });
}

/** How many rounds a ratio needs for the table to show its quartiles rather than its range. */
const QUARTILES_FROM = 8;

/** The q-quantile of `values`, interpolated between the nearest ranks (0.5: the median). */
function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return sorted[low] + (sorted[Math.min(low + 1, sorted.length - 1)] - sorted[low]) * (at - low);
}

/** One contender under one workload: start it, warm it up, measure, read its CPU time and memory. */
async function measure(contender, workload, { tokens }) {
  const [{ rows }] = await session([contender], workload, { tokens, rounds: 1 });
  return rows[0];
}

/**
 * Rounds take turns (every contender once, then again), so that a slow spell of this shared
 * machine falls on all of them; each round's ratios compare rows of that round only. Each
 * contender is started afresh for each of its rows. Resolves the rows of each contender.
 */
async function measureInRounds(contenders, workload, { tokens, rounds }) {
  const measured = contenders.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const i of rotation(contenders.length, round)) {
      measured[i].push(await measure(contenders[i], workload, { tokens }));
    }
  }
  return measured;
}

/**
 * `--interleave`: each contender is measured in a session of its own with a fresh baseline
 * process. Both are started and warmed up, then take turns of `--duration` seconds, `rounds`
 * times over, the baseline first in one round and second in the next; each of the contender's
 * turns is compared with the baseline turn next to it. The processes stay up between turns, with
 * no restart or seeding between them, so a slow spell of a shared machine is likely to fall on
 * both turns of a pair, and both processes sit idle equally long between their turns (with more
 * processes taking turns, the baseline, measured every other turn, came out ahead of the others,
 * which sat idle for longer). Without a baseline, the contenders take turns in one session.
 * Resolves the rows of each contender, one per round (the baseline's: one per pair).
 */
async function measureInterleaved(contenders, workload, { tokens, rounds }) {
  const baseline = contenders.find((contender) => contender.baseline);
  if (!baseline) return (await session(contenders, workload, { tokens, rounds })).map((entry) => entry.rows);
  const baselineRows = [];
  const rows = new Map([[baseline, baselineRows]]);
  const others = contenders.filter((c) => c !== baseline);
  for (const contender of others) rows.set(contender, []);
  // `--sessions N`: each pair of processes N times over, the contenders in turn, the turns pooled.
  for (let n = 0; n < Number(args.sessions); n++) {
    for (const contender of others) {
      const pair = contender.toggle ? [contender, contender] : [baseline, contender];
      const [base, other] = await session(pair, workload, { tokens, rounds });
      if (contender.toggle) base.rows.forEach((row) => (row.contender = baseline));
      base.rows.forEach((row, i) => (other.rows[i].base = row));
      baselineRows.push(...base.rows);
      rows.get(contender).push(...other.rows);
    }
  }
  return contenders.map((contender) => rows.get(contender));
}

/**
 * Starts and warms up `contenders`, then measures them in turn `rounds` times over, each round
 * starting one contender later. Resolves each contender with its rows.
 */
async function session(contenders, workload, { tokens, rounds }) {
  const codes = codesFor(workload);
  const started = [];
  try {
    // A `toggle` contender given twice is one process taking both turns: off, then on.
    const toggled = contenders.length === 2 && contenders[0] === contenders[1] && contenders[0].toggle;
    for (const [i, contender] of contenders.entries()) {
      const entry = { contender, rows: [] };
      if (toggled) entry.command = i === 0 ? contender.toggle.off : contender.toggle.on;
      started.push(entry);
      try {
        if (toggled && i === 1) {
          Object.assign(entry, { child: started[0].child, load: started[0].load, shared: true });
          if (started[0].failure) throw new Error(started[0].failure);
          await command(entry.child, entry.command);
          await warmUp(entry.load);
          continue;
        }
        entry.child = await startFor(contender, workload, { tokens, codes });
        entry.load = loadFor(workload, entry.child, { tokens, codes });
        if (entry.command) await command(entry.child, entry.command);
        await warmUp(entry.load);
      } catch (err) {
        entry.failure = err.message;
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (const entry of rotation(started.length, round).map((i) => started[i])) {
        const row = { contender: entry.contender, workload, tokens };
        if (entry.failure) row.failure = entry.failure;
        else {
          try {
            if (entry.command) await command(entry.child, entry.command);
            Object.assign(row, await measureWindow(entry.child, entry.load, Number(args.duration)));
          } catch (err) {
            row.failure = entry.failure = err.message;
          }
        }
        report(row);
        entry.rows.push(row);
      }
    }
    for (const entry of started) {
      if (!entry.failure) entry.rows.at(-1).memory = await memoryOf(entry.child);
    }
  } finally {
    await Promise.all(started.filter((entry) => !entry.shared).map((entry) => stop(entry.child)));
  }
  return started;
}

/** How many codes a contender stores for `workload`: only the code exchange uses them. */
function codesFor(workload) {
  return workload === 'code' ? Number(args.codes) : 0;
}

function startFor(contender, workload, { tokens, codes }) {
  return start(contender, {
    BENCH_WORKLOAD: workload,
    BENCH_TOKENS: String(tokens),
    BENCH_CODES: String(codes),
  });
}

async function warmUp(load) {
  await run(load, Number(args.warmup));
  if (load.check.wrong > 0) throw new Error(`warm-up: ${load.check.describe()}`);
}

/** `seconds` of load: requests per second, latency, and the server's CPU time per request. */
async function measureWindow(child, load, seconds) {
  const statementsBefore = await statementsOf(child);
  const before = cpuSeconds(child.pid);
  const loadBefore = cpuSeconds(process.pid);
  const result = await run(load, seconds);
  const cpu = cpuSeconds(child.pid) - before;
  const loadCpu = cpuSeconds(process.pid) - loadBefore;
  if (load.check.wrong > 0) throw new Error(load.check.describe());
  if (result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${result.errors} connection errors, ${result.timeouts} timeouts`);
  }
  const requests = load.check.ok;
  const statementsAfter = await statementsOf(child);
  return {
    statements: statementsBefore && statementsAfter && perRequest(statementsBefore, statementsAfter),
    requestsPerSecond: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMicros: (cpu * 1e6) / requests,
    coreShare: cpu / result.duration,
    loadShare: loadCpu / result.duration,
    requests,
  };
}

function report(row) {
  const status = row.failure ? `FAILED: ${row.failure}` : `${Math.round(row.requestsPerSecond)} req/s`;
  console.error(`  ${row.workload} · ${row.contender.label}: ${status}`);
}

/**
 * The request of a workload and the check of its answers. Each `code` request uses the next code;
 * `realms` requests spread over the stored tokens, so a lookup is not always the same hot key.
 */
function loadFor(workload, child, { tokens, codes }) {
  // A contender with OpenID Connect on must answer the code exchange with an ID token.
  const check = new Check(workload, { idToken: child.contender?.env?.BENCH_OIDC !== undefined });
  const json = {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: basicAuth(CLIENT_ID, CLIENT_SECRET),
  };
  const redirect = encodeURIComponent(REDIRECT_URI);
  let nextCode = 0;
  const requests = {
    realms: {
      method: 'GET',
      path: '/v1/realms',
      setupRequest(req) {
        // A contender that issued its tokens itself (JWT access tokens: signed, so not fixtures)
        // sends them when it is ready.
        const issued = child.bearerTokens;
        const token = issued
          ? issued[Math.floor(Math.random() * issued.length)]
          : tokens > 0
            ? fillerTokenFor(Math.floor(Math.random() * tokens))
            : ACCESS_TOKEN;
        return { ...req, headers: { ...req.headers, authorization: `Bearer ${token}` } };
      },
    },
    refresh: {
      method: 'POST',
      path: '/oauth/token',
      headers: json,
      body: `grant_type=refresh_token&refresh_token=${REFRESH_TOKEN}&redirect_uri=${redirect}`,
    },
    code: {
      method: 'POST',
      path: '/oauth/token',
      headers: json,
      setupRequest(req) {
        if (nextCode >= codes) check.ranOut = true;
        return {
          ...req,
          body: `grant_type=authorization_code&code=${codeFor(nextCode++)}&redirect_uri=${redirect}`,
        };
      },
    },
    authorize: {
      method: 'GET',
      path: `/oauth/authorize?${authorizeQuery}`,
    },
  };
  const request = requests[workload];
  if (!request) throw new Error(`unknown workload ${workload}`);
  request.headers = { ...request.headers, ...child.headers };
  request.onResponse = (status, body, _context, headers) => check.record(status, body, headers);
  return { url: `http://127.0.0.1:${child.port}`, request, check };
}

/** Counts right and wrong answers; keeps the first wrong one to show. */
class Check {
  ok = 0;
  wrong = 0;
  first;
  ranOut = false;
  constructor(workload, { idToken = false } = {}) {
    this.workload = workload;
    this.idToken = idToken;
  }
  record(status, body, headers) {
    const problem = this.problem(status, body, headers);
    if (problem === undefined) this.ok++;
    else {
      this.wrong++;
      this.first ??= `${problem} (status ${status}: ${String(body).slice(0, 160)})`;
    }
  }
  problem(status, body, headers) {
    switch (this.workload) {
      case 'realms':
        if (status !== 200) return 'not 200';
        return body === JSON.stringify(REALMS) ? undefined : 'not the realms';
      case 'refresh':
      case 'code': {
        if (status !== 200) return 'not 200';
        const answer = JSON.parse(body);
        if (typeof answer.access_token !== 'string' || answer.access_token.length < 20)
          return 'no access_token';
        if (String(answer.token_type).toLowerCase() !== 'bearer') return 'not a bearer token';
        if (this.workload === 'code' && typeof answer.refresh_token !== 'string') return 'no refresh_token';
        if (this.workload === 'code' && this.idToken && typeof answer.id_token !== 'string')
          return 'no id_token';
        return undefined;
      }
      case 'authorize': {
        // 302 from most; oidc-provider answers 303 (See Other), as good for a GET.
        if (status !== 302 && status !== 303) return 'not a redirect (302 or 303)';
        const location = headerOf(headers, 'location') ?? '';
        if (!location.startsWith(`${REDIRECT_URI}?code=`)) return `location ${location}`;
        return new URL(location).searchParams.get('state') === STATE ? undefined : 'state lost';
      }
    }
    return 'unknown workload';
  }
  describe() {
    const ranOut = this.ranOut ? ' (the stored codes ran out: raise --codes)' : '';
    return `${this.wrong} wrong answers of ${this.ok + this.wrong}${ranOut}; first: ${this.first}`;
  }
  reset() {
    this.ok = 0;
    this.wrong = 0;
  }
}

function headerOf(headers, name) {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** An autocannon run of `seconds`; the check counts only this run's answers. */
async function run(load, seconds) {
  load.check.reset();
  return autocannon({
    url: load.url,
    connections: Number(args.connections),
    duration: seconds,
    requests: [load.request].flat(),
  });
}

/** Starts a contender on the server core; resolves once it is listening with its fixtures stored. */
async function start(contender, env) {
  const script = scriptOf(contender);
  // BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the contenders.
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const node = [process.execPath, '--expose-gc', ...extra, script];
  const command = pinnedCores() ? ['taskset', '-c', SERVER_CORE, ...node] : node;
  const child = spawn(command[0], command.slice(1), {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...contender.env, ...env, NODE_ENV: 'production' },
  });
  const ready = await Promise.race([
    once(child, 'message').then(([message]) => message),
    once(child, 'exit').then(([code]) =>
      Promise.reject(new Error(`exited with ${code} before it was ready`)),
    ),
    new Promise((_, reject) =>
      setTimeout(() => reject(new Error('not ready after 15 minutes')), 900_000).unref(),
    ),
  ]);
  return Object.assign(child, {
    contender,
    port: ready.port,
    headers: ready.headers ?? {},
    bearerTokens: ready.bearerTokens,
  });
}

/** Sends a `toggle` contender `message`, resolved once it is done (`lib/contender.mjs`' `onCommand`). */
async function command(child, message) {
  const done = new Promise((resolve) => {
    const listener = (reply) => {
      if (reply?.done !== message) return;
      child.off('message', listener);
      resolve();
    };
    child.on('message', listener);
  });
  child.send(message);
  await done;
}

async function stop(child) {
  if (!child || child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.send('exit');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The contender's statement counts so far (`bench/lib/statement-counter.mjs`), or `null`. */
async function statementsOf(child) {
  if (child.countsStatements === false) return null;
  child.send('statements');
  // A contender of an older checkout (`before-*`) does not answer.
  const timeout = new Promise((resolve) => setTimeout(resolve, 2000, [{}]).unref());
  const [message] = await Promise.race([once(child, 'message'), timeout]);
  if (!('statements' in message)) child.countsStatements = false;
  return message.statements ? { ...message.statements, requests: message.requests } : null;
}

/** Statements per request of each engine between two counts, `undefined` for an engine not used. */
function perRequest(before, after) {
  const requests = after.requests - before.requests;
  const postgres = (after.postgres - before.postgres) / requests;
  const sqlite = (after.sqlite - before.sqlite) / requests;
  return { postgres: postgres || undefined, sqlite: sqlite || undefined };
}

async function memoryOf(child) {
  child.send('memory');
  const [message] = await once(child, 'message');
  return message.memory;
}

/** User plus system CPU seconds the process has used so far (/proc/PID/stat fields 14 and 15). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function pinnedCores() {
  return CORES >= 2;
}

/** This process (autocannon) on its own core, every thread of it. */
function pinSelf() {
  if (!pinnedCores()) {
    console.error('fewer than 2 cores: nothing is pinned, and load and server compete for the CPU');
    return false;
  }
  execFileSync('taskset', ['-a', '-cp', LOAD_CORE, String(process.pid)], { stdio: 'ignore' });
  return true;
}

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: err.message };
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The storage work of one request done the fastest way each engine allows, in-process
 * (`probes/bounds.mjs`, on the server core): CPU µs per request per engine and workload. A
 * workload's bound is this plus the memory adapter's CPU per request in the same table.
 */
function probeBounds(pinned) {
  const probe = [process.execPath, new URL('probes/bounds.mjs', here).pathname, '--json'];
  const command = pinned ? ['taskset', '-c', SERVER_CORE, ...probe] : probe;
  try {
    const bounds = JSON.parse(execFileSync(command[0], command.slice(1), { encoding: 'utf8' }));
    console.log(
      `- storage probes, CPU µs per request (\`probes/bounds.mjs\`): ${JSON.stringify(bounds, (_, v) => (typeof v === 'number' ? Number(v.toFixed(1)) : v))}\n`,
    );
    return bounds;
  } catch (err) {
    console.log(`- storage probes failed, no bounds: ${err.message}\n`);
    return {};
  }
}

function printSetup(pinned) {
  console.log(`# openid-oauth-bridge bench, ${new Date().toISOString()}\n`);
  console.log(`- ${cpus()[0]?.model ?? 'unknown CPU'}, ${CORES} cores, Node ${process.version}`);
  console.log(
    `- server ${pinned ? `pinned to core ${SERVER_CORE}` : 'not pinned'}, autocannon ${pinned ? `on core ${LOAD_CORE}` : 'unpinned'}, ` +
      `${args.connections} connections, ${args.warmup} s warm-up then ${args.duration} s measured per row\n`,
  );
}

const fmt = (value, digits = 0) => (value === undefined ? '' : value.toFixed(digits));

function printTable(workload, rows, bounds = {}) {
  const baseline = rows.find((r) => r.contender.baseline && !r.failure);
  console.log(`\n## ${WORKLOAD_TITLES[workload]}\n`);
  const rounds = rows.find((r) => r.rounds > 1 && !r.contender.baseline)?.rounds;
  if (rounds) {
    const how = args.interleave
      ? `${rounds} turns of ${args.duration} s per contender, each next to a turn of the baseline, by contenders that stay up${Number(args.sessions) > 1 ? ` (${args.sessions} sessions, each a fresh pair of processes)` : ''}`
      : `${rounds} rounds taken in turn`;
    const spread = rounds >= QUARTILES_FROM ? 'its middle half (quartiles)' : 'its range';
    console.log(
      `Medians of ${how}; a ratio is the median of the per-turn ratios, ${spread} in parentheses.\n`,
    );
  }
  console.log(
    '| contender | req/s | p50 ms | p99 ms | server CPU µs/req | server core busy | load core busy | req/s vs baseline | CPU/req: baseline ÷ this | target | statements/req | bound µs/req | CPU ÷ bound |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|');
  const memory = rows.find((r) => r.contender.id === 'library-memory' && !r.failure);
  for (const row of rows) {
    if (row.failure) {
      console.log(
        `| ${row.contender.label} | void: ${row.failure.replaceAll('|', '\\|')} | | | | | | | | | | | |`,
      );
      continue;
    }
    // The library's own durable rows (and the before- ones); a bound row is no row of an engine.
    const engine = row.contender.bound ? undefined : /-(sqlite|postgres)$/.exec(row.contender.id)?.[1];
    const probe = engine && bounds[engine]?.[workload];
    const bound = probe !== undefined && memory ? memory.cpuMicros + probe : undefined;
    const statementsPerRequest = engine && row.statements?.[engine];
    const storageColumns =
      `${statementsPerRequest === undefined ? '' : fmt(statementsPerRequest, 2)} | ${fmt(bound)} | ` +
      `${bound === undefined ? '' : fmt(row.cpuMicros / bound, 2)}`;
    const ratio = baseline ? row.throughputRatio : undefined;
    // What one core could serve, relative to the baseline: the measure of the targets, since it
    // holds whether or not the load saturated the server core (autocannon's own core may not
    // keep up with the lightest rows; "server core busy" tells).
    const capacity = baseline ? row.capacity : undefined;
    const [low, high] = row.capacitySpread ?? [];
    const range = low !== undefined && row.rounds > 1 ? ` (${fmt(low, 2)}–${fmt(high, 2)})` : '';
    const target = args.baseline
      ? TARGETS_VS[args.baseline]?.[row.contender.id]
      : TARGETS[workload]?.[row.contender.id];
    const verdict =
      target === undefined || capacity === undefined
        ? ''
        : `≥ ${target}: ${capacity >= target ? 'met' : 'MISSED'}`;
    console.log(
      `| ${row.contender.label} | ${fmt(row.requestsPerSecond)} | ${row.p50} | ${row.p99} | ${fmt(row.cpuMicros)} | ` +
        `${fmt(row.coreShare * 100)} % | ${fmt(row.loadShare * 100)} % | ${fmt(ratio, 3)} | ${fmt(capacity, 3)}${range} | ${verdict} | ${storageColumns} |`,
    );
  }
}

/**
 * `--scale`: W1 (`realms`) and W3 (`code`) against 1,000 and 1,000,000 stored tokens, per
 * contender. Both stores are up at once and take turns (interleaved, as `--interleave`): each
 * round measures both for `--duration` s, starting with the other one than the last round, so a
 * slow spell of the machine falls on both. The first count's tokens are saved through the
 * adapter; the rest are bulk copies in SQL in the library's own format (lib/bulk.mjs), and the
 * `realms` load presents a random one of all of them. PostgreSQL runs in a database of its own,
 * created and dropped here (BENCH_SCALE_ADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres).
 * Afterwards the plans of the statements the largest store ran (EXPLAIN) are checked for scans.
 */
async function scale(contenders) {
  const counts = (args.tokens ?? '1000,1000000').split(',').map(Number);
  const workloads = (args.workloads ?? 'realms,code').split(',');
  const rounds = Number(args.rounds);
  const codes = workloads.includes('code') ? Number(args.codes) : 0;
  const database = contenders.some((c) => c.needsPostgres) ? await scaleDatabase() : undefined;
  const results = [];
  const plans = [];
  try {
    for (const contender of contenders.filter((c) => !c.baseline)) {
      const entries = [];
      try {
        for (const tokens of counts) {
          const started = Date.now();
          console.error(
            `  ${contender.label}: storing ${tokens.toLocaleString('en')} tokens, ${codes} codes`,
          );
          const child = await start(contender, {
            BENCH_WORKLOAD: 'realms',
            BENCH_TOKENS: String(tokens),
            BENCH_LIBRARY_TOKENS: String(Math.min(tokens, counts[0])),
            BENCH_CODES: String(codes),
            BENCH_RECORD_SQL: '1',
            ...(database ? { BENCH_POSTGRES_URL: database.url } : {}),
          });
          entries.push({ tokens, child, seconds: (Date.now() - started) / 1000 });
        }
        for (const workload of workloads) {
          const loads = entries.map((e) => loadFor(workload, e.child, { tokens: e.tokens, codes }));
          const rows = entries.map(() => []);
          let failure;
          try {
            for (const load of loads) await warmUp(load);
            for (let round = 0; round < rounds; round++) {
              for (const i of rotation(entries.length, round)) {
                const row = await measureWindow(entries[i].child, loads[i], Number(args.duration));
                console.error(
                  `  ${workload} · ${contender.label} · ${entries[i].tokens.toLocaleString('en')} tokens: ${Math.round(row.requestsPerSecond)} req/s, ${Math.round(row.cpuMicros)} µs/req`,
                );
                rows[i].push(row);
              }
            }
          } catch (err) {
            failure = err.message;
            console.error(`  ${workload} · ${contender.label}: FAILED: ${failure}`);
          }
          results.push({ contender, workload, entries, rows, failure });
        }
        const largest = entries.at(-1);
        if (largest && largest.child.exitCode === null) {
          largest.child.send('explain');
          // Only the library's contender answers (a peer's has no SQL to explain).
          const timeout = new Promise((resolve) => setTimeout(resolve, 30_000, [{}]).unref());
          const [message] = await Promise.race([once(largest.child, 'message'), timeout]);
          if (message.plans?.length) plans.push({ contender, tokens: largest.tokens, plans: message.plans });
        }
      } finally {
        await Promise.all(entries.map((e) => stop(e.child)));
      }
    }
  } finally {
    await database?.drop();
  }
  printScale(counts, results, plans, rounds);
}

/** A PostgreSQL database for `--scale` alone: created now, dropped by `drop()`. */
async function scaleDatabase() {
  const admin = process.env.BENCH_SCALE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = 'bench_scale';
  const query = async (text) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await query(`drop database if exists ${name} with (force)`);
  await query(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  console.error(`  PostgreSQL: database ${name} created for the scale run`);
  return {
    url: url.toString(),
    drop: async () => {
      await query(`drop database if exists ${name} with (force)`);
      console.error(`  PostgreSQL: database ${name} dropped`);
    },
  };
}

function printScale(counts, results, plans, rounds) {
  const median = (values) => quantile(values, 0.5);
  const label = (n) => `${n.toLocaleString('en')} tokens`;
  console.log('\n## Scale: W1 (`GET /v1/realms`) and W3 (code exchange) against stored tokens\n');
  console.log(
    `${rounds} interleaved turns of ${args.duration} s per store, both stores up at once; medians, and the range of the per-round ratio in parentheses. ` +
      `The W1 load presents a random one of all stored tokens. Target (issue 21): the largest store within 10 % of the smallest in CPU per request.\n`,
  );
  const last = counts.at(-1);
  console.log(
    `| contender | workload | ${counts.map((n) => `${label(n)}: req/s · CPU µs/req`).join(' | ')} | CPU/req, ${label(last)} ÷ ${label(counts[0])} | req/s, ${label(last)} ÷ ${label(counts[0])} | within 10 % |`,
  );
  console.log(`|---|---|${counts.map(() => '---:').join('|')}|---:|---:|---|`);
  for (const { contender, workload, rows, failure } of results) {
    if (failure || rows.some((r) => r.length === 0)) {
      console.log(`| ${contender.label} | ${workload} | void: ${String(failure).replaceAll('|', '\\|')} |`);
      continue;
    }
    const cells = rows.map(
      (r) => `${fmt(median(r.map((x) => x.requestsPerSecond)))} · ${fmt(median(r.map((x) => x.cpuMicros)))}`,
    );
    const cpuRatios = rows[0].map((first, round) => rows.at(-1)[round].cpuMicros / first.cpuMicros);
    const rateRatios = rows[0].map(
      (first, round) => rows.at(-1)[round].requestsPerSecond / first.requestsPerSecond,
    );
    const cpu = median(cpuRatios);
    console.log(
      `| ${contender.label} | ${workload} | ${cells.join(' | ')} | ${fmt(cpu, 3)} (${fmt(Math.min(...cpuRatios), 2)}–${fmt(Math.max(...cpuRatios), 2)}) | ` +
        `${fmt(median(rateRatios), 3)} | ${cpu <= 1.1 ? 'yes' : 'NO'} |`,
    );
  }
  for (const { contender, workload, entries } of results.filter((r) => r.workload === results[0].workload)) {
    console.log(
      `\n- ${contender.label}: ready in ${entries.map((e) => `${fmt(e.seconds, 1)} s (${label(e.tokens)})`).join(', ')}` +
        ` (${workload} first)`,
    );
  }
  if (plans.length > 0) console.log('\n### Plans of the statements the largest store ran (EXPLAIN)\n');
  for (const { contender, tokens, plans: list } of plans) {
    // A full scan of a table that grows with the tokens is what would not stay flat.
    const scans = list.filter(({ plan }) =>
      /Seq Scan on oauth_|^SCAN (?!CONSTANT)|\nSCAN (?!CONSTANT)/m.test(plan),
    );
    console.log(
      `- ${contender.label}, ${label(tokens)}: ${list.length} distinct statements, ` +
        `${scans.length === 0 ? 'none scans a table' : `${scans.length} with a scan:`}`,
    );
    for (const { sql, plan } of scans) {
      console.log(
        `\n  \`${sql.replace(/\s+/g, ' ').slice(0, 300)}\`\n\n  \`\`\`\n  ${plan.replaceAll('\n', '\n  ')}\n  \`\`\``,
      );
    }
    for (const { sql, plan } of list) {
      console.log(
        `  - \`${sql.replace(/\s+/g, ' ').slice(0, 110)}…\`: ${plan.replace(/\s+/g, ' ').slice(0, 220)}`,
      );
    }
  }
}

/**
 * `--soak SECONDS`: the server's memory under full load for SECONDS, per contender. One
 * continuous autocannon run of the `--workloads` (default `realms`; several are mixed: each
 * connection sends them in turn), every answer checked; the server's RSS read from
 * /proc/PID/status every `--sample` s (default 10) without disturbing it, and its heap after a
 * full collection at the start and the end. Prints the samples, RSS first/last/max and its slope
 * (least squares, MB per minute) over the whole run and after its first minute.
 */
async function soak(contenders, seconds) {
  const workloads = (args.workloads ?? 'realms').split(',');
  const every = Number(args.sample ?? 10);
  const codes = workloads.includes('code') ? Number(args.codes) : 0;
  const tokens = Number(args.tokens ?? 1000);
  console.log(`\n## Server memory across ${seconds} s of full load: ${workloads.join(' + ')}\n`);
  for (const contender of contenders.filter((c) => !c.baseline)) {
    const child = await start(contender, {
      BENCH_WORKLOAD: workloads.includes('authorize') ? 'authorize' : workloads[0],
      BENCH_TOKENS: String(tokens),
      BENCH_CODES: String(codes),
    });
    try {
      const load = mixedLoad(workloads, child, { tokens, codes });
      await warmUp(load);
      const heapStart = (await memoryOf(child)).heapUsed;
      const samples = [];
      const started = Date.now();
      const sample = () => samples.push({ at: (Date.now() - started) / 1000, rss: rssOf(child.pid) });
      sample();
      const timer = setInterval(sample, every * 1000);
      const cpuBefore = cpuSeconds(child.pid);
      let result;
      try {
        result = await run(load, seconds);
      } finally {
        clearInterval(timer);
      }
      if ((Date.now() - started) / 1000 - samples.at(-1).at >= 1) sample();
      const cpu = cpuSeconds(child.pid) - cpuBefore;
      const failure =
        load.check.wrong > 0
          ? load.check.describe()
          : result.errors + result.timeouts > 0
            ? `${result.errors} connection errors, ${result.timeouts} timeouts`
            : undefined;
      const heapEnd = (await memoryOf(child)).heapUsed;
      const mb = (bytes) => bytes / 1048576;
      console.log(
        `### ${contender.label}: ${load.check.ok.toLocaleString('en')} requests in ${fmt(result.duration)} s ` +
          `(${fmt(load.check.ok / result.duration)} req/s, server core busy ${fmt((cpu / result.duration) * 100)} %), ` +
          `${failure ? `FAILED: ${failure}` : 'all checked, no errors'}\n`,
      );
      console.log('| s | RSS, MB |');
      console.log('|---:|---:|');
      for (const s of samples) console.log(`| ${fmt(s.at)} | ${fmt(mb(s.rss), 1)} |`);
      const rss = samples.map((s) => mb(s.rss));
      const slope = (list) => slopePerMinute(list.map((s) => [s.at, mb(s.rss)]));
      const afterMinute = samples.filter((s) => s.at >= 60);
      console.log(
        `\nRSS first ${fmt(rss[0], 1)} MB, last ${fmt(rss.at(-1), 1)} MB, max ${fmt(Math.max(...rss), 1)} MB; ` +
          `slope ${fmt(slope(samples), 2)} MB/min over the run, ${afterMinute.length >= 3 ? `${fmt(slope(afterMinute), 2)} MB/min after the first minute` : 'too short for a slope after the first minute'}; ` +
          `heap after a full GC ${fmt(mb(heapStart), 1)} MB at the start, ${fmt(mb(heapEnd), 1)} MB at the end\n`,
      );
    } finally {
      await stop(child);
    }
  }
}

/** Least-squares slope of [seconds, MB] points, in MB per minute. */
function slopePerMinute(points) {
  const n = points.length;
  const meanX = points.reduce((a, [x]) => a + x, 0) / n;
  const meanY = points.reduce((a, [, y]) => a + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

/** Resident set size of a process, in bytes (/proc/PID/status, VmRSS). */
function rssOf(pid) {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** Several workloads' requests in one load: each connection sends them in turn; checks summed. */
function mixedLoad(workloads, child, options) {
  const loads = workloads.map((workload) => loadFor(workload, child, options));
  if (loads.length === 1) return loads[0];
  const checks = loads.map((l) => l.check);
  const sum = (key) => checks.reduce((a, c) => a + c[key], 0);
  return {
    url: loads[0].url,
    request: loads.map((l) => l.request),
    check: {
      get ok() {
        return sum('ok');
      },
      get wrong() {
        return sum('wrong');
      },
      describe: () =>
        checks
          .filter((c) => c.wrong > 0)
          .map((c) => `${c.workload}: ${c.describe()}`)
          .join('; '),
      reset: () => checks.forEach((c) => c.reset()),
    },
  };
}

await main();
