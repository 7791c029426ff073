import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, registerClient } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { answerDevice, pollToken, requestDeviceCode } from '../support/device.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';
import { exchangeCode, obtainCode, obtainTokens, refreshWith } from '../support/flow.js';

/**
 * Statements per request on the four workloads of the bench (bench/README.md): the bearer check
 * (W1), a refresh (W2), a code exchange (W3) and an authorization by a signed-in user who already
 * trusts the client (W4). Counted at the drivers: on PostgreSQL every `Client#query` is one
 * statement and one round trip (node-postgres does not pipeline); on SQLite every run of a
 * prepared statement. Counts, not time. The endpoints that authenticate a client read the client,
 * its two rate-limit counters and the code or token in one load step, through the adapter's
 * reader: one statement (`Storage.reader`). Every other storage call is one statement:
 *
 * - W1: `tokens.find` (the token with its grant and client).
 * - W2: the load step (client, counters, refresh token), `tokens.save`.
 * - W3: the load step (client, counters, the code and the grant it names), `tokens.saveAll` (the
 *   access and the refresh token), then `ephemeral.replace` of the code by its used marker, the
 *   commit point. At most 3 (issue 43): more fails here.
 * - The poll that gets the tokens: the load step, the grant, `tokens.saveAll`, then
 *   `ephemeral.take` of the device request, the commit point.
 * - W4: the session (`ephemeral.get`, express-session's), the load step (the client and the
 *   signed-in user's grant at it), the code (`ephemeral.set`).
 * - A device's poll (RFC 8628) while the person has not answered: the load step (client,
 *   counters, the device request, its answer, its pace), then the pace (`ephemeral.set`).
 */
const counts = { postgres: 0, sqlite: 0 };
let installed = false;

function installCounter(): void {
  if (installed) return;
  installed = true;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
    counts.postgres++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
  probe.close();
  for (const method of ['run', 'get', 'all', 'iterate']) {
    const original = statement[method] as (...a: unknown[]) => unknown;
    statement[method] = function counted(this: unknown, ...args: unknown[]) {
      counts.sqlite++;
      return original.apply(this, args);
    };
  }
}

/** The statements `engine` ran while `request` was answered. */
async function statementsOf<T>(engine: keyof typeof counts, request: () => Promise<T>) {
  const before = counts[engine];
  const result = await request();
  return { result, statements: counts[engine] - before };
}

interface Engine {
  name: 'PostgreSQL' | 'SQLite';
  key: keyof typeof counts;
  open(): Promise<{ storage: SqlStorage; dispose(): Promise<void> }>;
  /** Statements per workload. */
  expected: {
    bearer: number;
    refresh: number;
    exchange: number;
    authorize: number;
    pendingPoll: number;
    tokenPoll: number;
  };
}

const postgres = await postgresAvailability();
const dir = mkdtempSync(join(tmpdir(), 'oob-round-trips-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const engines: Engine[] = [
  {
    name: 'PostgreSQL',
    key: 'postgres',
    async open() {
      const schema = uniqueSchema('round_trips');
      const storage = await connectStorage(postgresUrlFor(schema), { migrate: true });
      return {
        storage,
        async dispose() {
          await storage.close();
          await dropSchema(schema);
        },
      };
    },
    expected: { bearer: 1, refresh: 2, exchange: 3, authorize: 3, pendingPoll: 2, tokenPoll: 4 },
  },
  {
    name: 'SQLite',
    key: 'sqlite',
    async open() {
      const storage = await connectStorage(`sqlite:${join(dir, `${Date.now()}-${Math.random()}.db`)}`, {
        migrate: true,
      });
      return { storage, dispose: () => storage.close() };
    },
    expected: { bearer: 1, refresh: 2, exchange: 3, authorize: 3, pendingPoll: 2, tokenPoll: 4 },
  },
];

describe.each(engines)('statements per request, $name', (engine) => {
  const skip = engine.key === 'postgres' && !postgres.ok;
  let t: TestApp;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    if (skip) return;
    installCounter();
    const opened = await engine.open();
    dispose = opened.dispose;
    t = await createTestApp({ storage: opened.storage });
    await registerClient(opened.storage, {
      clientId: 'cli',
      applicationName: 'CLI',
      grantType: 'device_code',
      public: true,
      scopes: ['realms'],
    });
  });
  afterAll(async () => {
    if (skip) return;
    await t.close();
    await dispose();
  });

  it.skipIf(skip)(
    'W1: a bearer check reads the token with its grant and client in one statement',
    async () => {
      const tokens = await obtainTokens(t);
      const { result, statements } = await statementsOf(engine.key, () =>
        t.agent.get('/v1/realms').set('Authorization', `Bearer ${tokens.access_token}`),
      );
      expect(result.status).toBe(200);
      expect(statements).toBe(engine.expected.bearer);
    },
  );

  it.skipIf(skip)('W2: a refresh', async () => {
    const tokens = await obtainTokens(t);
    const { result, statements } = await statementsOf(engine.key, () => refreshWith(t, tokens.refresh_token));
    expect(result.status).toBe(200);
    expect(result.body.access_token).toEqual(expect.any(String));
    expect(statements).toBe(engine.expected.refresh);
  });

  it.skipIf(skip)('W3: a code exchange', async () => {
    const { code } = await obtainCode(t);
    const { result, statements } = await statementsOf(engine.key, () => exchangeCode(t, code));
    expect(result.status).toBe(200);
    expect(result.body.refresh_token).toEqual(expect.any(String));
    expect(statements).toBe(engine.expected.exchange);
  });

  it.skipIf(skip)('W4: an authorization by a signed-in user who already trusts the client', async () => {
    await obtainCode(t);
    const query = {
      response_type: 'code',
      client_id: t.codeClient.clientId,
      redirect_uri: 'https://client.example/cb',
      state: 'again',
    };
    const { result, statements } = await statementsOf(engine.key, () =>
      t.agent.get('/oauth/authorize').query(query),
    );
    expect(result.status).toBe(302);
    expect(result.headers.location).toMatch(/^https:\/\/client\.example\/cb\?code=/);
    expect(statements).toBe(engine.expected.authorize);
  });

  it.skipIf(skip)('a device polling: while pending, and the poll that gets the tokens', async () => {
    const started = async () =>
      (await requestDeviceCode(t, { client_id: 'cli' })).body as { device_code: string; user_code: string };
    const waiting = await started();
    const pending = await statementsOf(engine.key, () =>
      pollToken(t, { device_code: waiting.device_code, client_id: 'cli' }),
    );
    expect(pending.result.body.error).toBe('authorization_pending');
    expect(pending.statements).toBe(engine.expected.pendingPoll);

    const approved = await started();
    await answerDevice(t, approved.user_code, 'allow');
    const tokens = await statementsOf(engine.key, () =>
      pollToken(t, { device_code: approved.device_code, client_id: 'cli' }),
    );
    expect(tokens.result.status).toBe(200);
    expect(tokens.statements).toBe(engine.expected.tokenPoll);
  });
});
