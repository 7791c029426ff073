/**
 * openid-oauth-bridge as an app that installed it would run it: every endpoint of the library
 * (`oauthRouter`) mounted in front of the app's own `GET /v1/realms`, which `requireBearer` protects. The storage
 * is chosen by BENCH_STORAGE: `memory`, `sqlite` (a file, WAL) or `postgres` (BENCH_POSTGRES_URL,
 * default postgres://root@127.0.0.1:5432/test, in a schema of its own that is dropped at exit).
 *
 * Fixtures are written through the storage adapter's public interface, hashed as the library
 * stores them. The `authorize` workload's user logs in for real, at the development OpenID
 * provider in this process, and trusts the client on the consent page, before the load starts.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pg from 'pg';
import { createRequire } from 'node:module';
import {
  connectStorage,
  createAuthorizationServer,
  memoryStorage,
  oauthRouter,
  requireBearer,
} from 'openid-oauth-bridge';
import { sqlStorage } from 'openid-oauth-bridge/storage';
import { metricsRouter, recordFigures, traceChannel } from 'openid-oauth-bridge/observability';
import { startDevelopmentProvider } from 'openid-oauth-bridge/testing';
import { bulkCopyTokens, explainRecorded } from '../lib/bulk.mjs';
import {
  beforeExit,
  codeCount,
  forEachLimited,
  listen,
  onCommand,
  ready,
  tokenCount,
  workload,
} from '../lib/contender.mjs';
import { forgetRecordedStatements, installStatementCounter } from '../lib/statement-counter.mjs';
import {
  ACCESS_TOKEN,
  authorizeQuery,
  CLIENT_ID,
  CLIENT_SECRET,
  codeFor,
  fillerTokenFor,
  REALMS,
  REDIRECT_URI,
  REFRESH_TOKEN,
  SCOPE,
  sha256,
  USER,
} from '../lib/fixtures.mjs';

const kind = process.env.BENCH_STORAGE ?? 'memory';
/**
 * A UUID as a flat string, as the library makes its ids: `randomUUID()`'s own string is a tree of
 * concatenated pieces (about 470 bytes instead of 56) in V8, which 250,000 seeded codes would keep
 * in the memory adapter's heap, a load the library's own codes do not carry.
 */
const newId = () => Buffer.from(randomUUID(), 'latin1').toString('latin1');
const cleanups = [];
/**
 * BENCH_LIBRARY_TOKENS (`--scale`): how many of the BENCH_TOKENS filler tokens are saved through
 * the adapter; the rest are copies of the first one's row with their own hash, inserted in bulk
 * in SQL (lib/bulk.mjs), as a store that has grown to that size would hold them. Every filler
 * token is valid: the load presents any of them, and every answer is checked.
 */
const libraryTokens =
  kind === 'memory'
    ? tokenCount
    : Math.min(tokenCount, Number(process.env.BENCH_LIBRARY_TOKENS ?? tokenCount));
/** Where the SQL engines keep their data, for the bulk copy and EXPLAIN (lib/bulk.mjs). */
const where = {};
process.on('exit', () => cleanups.forEach((cleanup) => cleanup()));

// Statements per request, for the bench's table (one increment per statement).
if (kind !== 'memory') await installStatementCounter();
const storage = await openStorage(kind);
let handler = (_req, res) => res.status(503).end();
const { server: http, url } = await listen((req, res) => handler(req, res));
const op = await startDevelopmentProvider({ users: [USER] });

const OIDC = process.env.BENCH_OIDC;
/**
 * BENCH_RESOURCE=1: the API is a declared resource (RFC 8707), the default one, and every token
 * and grant is bound to it: what requireBearer's audience check costs (`library-memory-resource`).
 */
const RESOURCES = process.env.BENCH_RESOURCE ? [url] : [];
/**
 * BENCH_JWT=1 (with BENCH_RESOURCE): the resource issues JWT access tokens (RFC 9068, RS256;
 * BENCH_JWT=ES256 for ES256); W1 presents tokens the library issued through the token endpoint,
 * each with its record (`library-*-jwt`).
 */
const JWT = Boolean(process.env.BENCH_JWT && RESOURCES.length);
const JWT_ALGORITHM = process.env.BENCH_JWT === 'ES256' ? 'ES256' : 'RS256';
const JWT_KEY_SECRET = 'bench-oidc-key-secret-0123456789abcdefghij';
/** The scopes of the client, its grant and its codes. */
const SCOPES = OIDC ? [SCOPE, 'openid'] : [SCOPE];

const server = createAuthorizationServer({
  baseUrl: url,
  storage,
  providers: [{ name: 'Development', identifier: op.identifier }],
  session: { secret: 'bench-session-secret-0123456789abcdefghijklmnopqrstuvwxyz' },
  scopes: { [SCOPE]: 'See the list of your realms' },
  ...(RESOURCES.length
    ? {
        resources: [
          {
            resource: url,
            default: true,
            // A day: a long run must not see its tokens expire.
            ...(JWT ? { accessTokenFormat: 'jwt', accessTokenTtl: 86_400 } : {}),
          },
        ],
      }
    : {}),
  // BENCH_OIDC=RS256|ES256: OpenID Connect on, every code granting `openid` (an ID token signed
  // with that algorithm at each exchange).
  ...(OIDC ? { oidc: { keySecret: JWT_KEY_SECRET, signingAlgorithm: OIDC } } : {}),
  ...(JWT && !OIDC ? { oidc: { keySecret: JWT_KEY_SECRET, signingAlgorithm: JWT_ALGORITHM } } : {}),
  logger: { warn: () => {}, error: (message, details) => console.error(message, details) },
});

const app = express();
app.disable('x-powered-by');
// BENCH_METRICS=1: the Prometheus router in front of everything, so every request passes it and
// is recorded (its events and tracing channels): what the figures cost (`library-memory-metrics`).
// BENCH_METRICS=record: the recording alone, into a sink that keeps nothing, with no router layer
// (`library-memory-figures`): how the cost splits between the two.
// BENCH_METRICS=toggle: the router mounted in front of every route and taken out again on the
// runner's `figures:on` and `figures:off`, so that both turns of a pair run in one process
// (`library-memory-metrics-toggled`): no difference between two processes falls on the figures.
// BENCH_METRICS=channel: an empty subscriber on the bearer channel from the start
// (`library-memory-channel`): what tracing a request costs, with no figure recorded.
if (process.env.BENCH_METRICS === 'channel') subscribeEmpty();
else if (process.env.BENCH_METRICS === 'record') recordFigures(server, { count() {}, observe() {} });
else if (process.env.BENCH_METRICS === 'toggle') toggleMetrics();
else if (process.env.BENCH_METRICS) app.use(metricsRouter(server));
// Every endpoint, as the README mounts them: one router, one layer in front of the app's routes.
app.use(oauthRouter(server));
// BENCH_UNPROTECTED=1 leaves out requireBearer, for finding where the cost goes (`library-unprotected`).
const protect = process.env.BENCH_UNPROTECTED ? [] : [requireBearer(server, { scopes: [SCOPE] })];
app.get('/v1/realms', ...protect, (_req, res) => {
  res.json(REALMS);
});
handler = app;

await seed();
const headers = workload === 'authorize' ? { cookie: await logInAndTrust() } : {};
const bearerTokens = JWT && workload === 'realms' ? await issueJwtAccessTokens() : undefined;
forgetRecordedStatements();
ready(http, headers, bearerTokens);
// `--scale`: the plans of the statements the load ran (BENCH_RECORD_SQL=1).
process.on('message', async (message) => {
  if (message === 'explain') process.send({ plans: await explainRecorded(where) });
});

async function openStorage(name) {
  if (name === 'memory') return memoryStorage();
  if (name === 'sqlite') {
    const file = join(tmpdir(), `openid-oauth-bridge-bench-${process.pid}.db`);
    Object.assign(where, { engine: 'sqlite', file });
    cleanups.push(() => ['', '-wal', '-shm'].forEach((suffix) => rmSync(file + suffix, { force: true })));
    const pragmas = process.env.BENCH_SQLITE_PRAGMAS;
    if (!pragmas) return connectStorage(`sqlite:${file}`, { migrate: true });
    // An experiment: the app's own handle (`sqlStorage({ sqlite })`, as the README allows) with
    // connectStorage's pragmas and then BENCH_SQLITE_PRAGMAS (`;`-separated, e.g. mmap_size=1073741824).
    const Database = createRequire(import.meta.resolve('openid-oauth-bridge'))('better-sqlite3');
    const db = new Database(file);
    for (const pragma of [
      'journal_mode = WAL',
      'synchronous = NORMAL',
      'busy_timeout = 5000',
      'cache_size = -65536',
    ]) {
      db.pragma(pragma);
    }
    for (const pragma of pragmas.split(';').filter(Boolean)) db.pragma(pragma);
    const own = sqlStorage({ sqlite: db });
    await own.migrate();
    return own;
  }
  if (name === 'postgres') {
    const base = process.env.BENCH_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
    const schema = `bench_${process.pid}`;
    beforeExit(async () => {
      await storage.close();
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    });
    const target = new URL(base);
    target.searchParams.set('schema', schema);
    Object.assign(where, { engine: 'postgres', url: base, schema });
    return connectStorage(target.toString(), { migrate: true });
  }
  throw new Error(`BENCH_STORAGE must be memory, sqlite or postgres, not ${name}`);
}

/** The client, a user, a live access and refresh token, the filler tokens and the codes. */
async function seed() {
  const now = Date.now();
  await storage.clients.create({
    clientId: CLIENT_ID,
    applicationName: 'Bench client',
    redirectUri: REDIRECT_URI,
    grantType: 'authorization_code',
    secretHash: sha256(CLIENT_SECRET),
    scopes: SCOPES,
    defaultScopes: null,
    contacts: [],
    disabled: false,
    createdAt: now,
  });
  const user = await storage.users.findOrCreate(
    { provider: 'bench', identifier: 'https://bench.example/user' },
    newId(),
    now,
  );
  // One grant (the user's consent for the client) that every token and code belongs to.
  const grantId = newId();
  await storage.grants.save({
    grantId,
    userId: user.id,
    clientId: CLIENT_ID,
    scopes: SCOPES,
    ...(RESOURCES.length ? { resources: RESOURCES } : {}),
    createdAt: now,
    updatedAt: now,
    revokedAt: null,
  });
  const subject = {
    clientId: CLIENT_ID,
    userId: user.id,
    scopes: SCOPES,
    grantId,
    ...(RESOURCES.length ? { resources: RESOURCES } : {}),
  };
  // Hours, not the default hour: a long run must not see its tokens or codes expire.
  const expiresAt = now + 6 * 3_600_000;
  const token = (plaintext, type) => ({
    ...subject,
    tokenHash: sha256(plaintext),
    type,
    origin: 'authorization_code',
    createdAt: now,
    expiresAt: type === 'access_token' ? expiresAt : null,
    rotatedAt: null,
  });
  const concurrency = kind === 'postgres' ? 16 : 1;
  await storage.tokens.save(token(ACCESS_TOKEN, 'access_token'));
  await forEachLimited(libraryTokens, concurrency, (i) =>
    storage.tokens.save(token(fillerTokenFor(i), 'access_token')),
  );
  if (tokenCount > libraryTokens) {
    await bulkCopyTokens(where, { template: sha256(fillerTokenFor(0)), from: libraryTokens, to: tokenCount });
  }
  await storage.tokens.save(token(REFRESH_TOKEN, 'refresh_token'));
  // Codes as the library keeps them in the ephemeral store (src/storage/keys.ts).
  await forEachLimited(codeCount, concurrency, (i) =>
    storage.ephemeral.set(
      `code:${sha256(codeFor(i))}`,
      JSON.stringify({
        ...subject,
        redirectUri: REDIRECT_URI,
        codeChallenge: null,
        codeChallengeMethod: null,
        ...(OIDC ? { authTime: now } : {}),
        createdAt: now,
        expiresAt,
      }),
      expiresAt,
      now,
    ),
  );
}

/**
 * BENCH_TOKENS JWT access tokens, issued by the library: a code per token, stored as the library
 * stores its codes, exchanged at the token endpoint. Their records are saved as any token's.
 */
async function issueJwtAccessTokens() {
  const now = Date.now();
  const [grant] = await storage.grants.list({ clientId: CLIENT_ID });
  const code = (i) => `bench-jwt-code-${String(i).padStart(32, '0')}`;
  const tokens = [];
  for (let i = 0; i < Math.max(tokenCount, 1); i++) {
    await storage.ephemeral.set(
      `code:${sha256(code(i))}`,
      JSON.stringify({
        clientId: CLIENT_ID,
        userId: grant.userId,
        scopes: SCOPES,
        grantId: grant.grantId,
        resources: RESOURCES,
        redirectUri: REDIRECT_URI,
        codeChallenge: null,
        codeChallengeMethod: null,
        createdAt: now,
        expiresAt: now + 3_600_000,
      }),
      now + 3_600_000,
      now,
    );
    const res = await fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: code(i),
        redirect_uri: REDIRECT_URI,
      }),
    });
    const body = await res.json();
    if (res.status !== 200 || body.access_token.split('.').length !== 3) {
      throw new Error(`issuing a JWT access token: ${res.status} ${JSON.stringify(body)}`);
    }
    tokens.push(body.access_token);
  }
  return tokens;
}

/**
 * What a browser does once: the authorization request, the provider's sign-in form, the consent
 * page. Resolves the session cookie of a user who is logged in and trusts the client.
 */
async function logInAndTrust() {
  let cookie = '';
  const get = async (target, init = {}) => {
    const own = target.startsWith(url);
    const res = await fetch(target, {
      redirect: 'manual',
      ...init,
      headers: { ...(own && cookie ? { cookie } : {}), ...init.headers },
    });
    const set = res.headers.get('set-cookie');
    if (own && set) cookie = set.split(';')[0];
    return res;
  };
  const expect = (res, status, step) => {
    if (res.status !== status)
      throw new Error(`login for the authorize workload: ${step} gave ${res.status}`);
    return res;
  };
  const start = expect(await get(`${url}/oauth/authorize?${authorizeQuery}`), 200, 'selection page');
  const login = /<a href="([^"]+)">/.exec(await start.text())[1].replaceAll('&amp;', '&');
  const toProvider = expect(await get(new URL(login, url).toString()), 302, 'login');
  const signIn = expect(await get(toProvider.headers.get('location')), 200, 'provider page');
  const form = parseForm(await signIn.text());
  const body = new URLSearchParams({ ...form.fields, dev_user: USER, dev_action: 'signin' });
  const back = expect(await get(form.action, { method: 'POST', body }), 302, 'provider sign-in');
  const loggedIn = expect(await get(back.headers.get('location')), 303, 'login callback');
  const consent = expect(await get(loggedIn.headers.get('location')), 200, 'consent page');
  const decision = parseForm(await consent.text());
  const allowed = await get(decision.action, {
    method: 'POST',
    headers: { origin: url },
    body: new URLSearchParams({ ...decision.fields, decision: 'allow' }),
  });
  expect(allowed, 303, 'consent');
  if (!allowed.headers.get('location').startsWith(`${REDIRECT_URI}?code=`))
    throw new Error('no code after consent');
  return cookie;
}

/** The first form of a page: its action and hidden fields (the pages here are simple). */
function parseForm(page) {
  const form = /<form[\s\S]*?<\/form>/.exec(page)[0];
  const action = /<form[^>]*action="([^"]+)"/.exec(form)[1].replaceAll('&amp;', '&');
  const fields = {};
  for (const [, name, value] of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    fields[name] = value.replaceAll('&amp;', '&').replaceAll('&quot;', '"');
  }
  return { action, fields };
}

/** An empty subscriber on the bearer channel (`start` and `asyncEnd`); returns its unsubscriber. */
function subscribeEmpty() {
  const handlers = { start() {}, asyncEnd() {} };
  const channel = traceChannel('bearer');
  channel.subscribe(handlers);
  return () => channel.unsubscribe(handlers);
}

/**
 * BENCH_METRICS=toggle: `figures:on` mounts the router first of all, `figures:off` takes it out.
 * BENCH_TOGGLE_PART=recording toggles the recording alone (no router layer), `layer` a router layer
 * that records nothing (a middleware that calls `next()`), `channel` an empty subscriber on the
 * bearer channel: where the cost is; `nothing` changes nothing, the A/A control of the others.
 */
function toggleMetrics() {
  const part = process.env.BENCH_TOGGLE_PART ?? 'all';
  let mounted;
  onCommand('figures:on', () => {
    if (mounted || part === 'nothing') return;
    if (part === 'channel') {
      mounted = { metrics: { stop: subscribeEmpty() } };
      return;
    }
    if (part === 'recording') {
      mounted = { metrics: { stop: recordFigures(server, { count() {}, observe() {} }) } };
      return;
    }
    const metrics =
      part === 'layer' ? Object.assign((_req, _res, next) => next(), { stop() {} }) : metricsRouter(server);
    app.use(metrics);
    const { stack } = app.router;
    stack.unshift(stack.pop());
    mounted = { metrics, layer: stack[0] };
  });
  onCommand('figures:off', () => {
    if (!mounted) return;
    mounted.metrics.stop();
    const { stack } = app.router;
    if (mounted.layer) stack.splice(stack.indexOf(mounted.layer), 1);
    mounted = undefined;
  });
}
