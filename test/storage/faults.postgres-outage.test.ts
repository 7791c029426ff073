/**
 * PostgreSQL down, slow or full, on a private cluster this file starts, stops and overloads (see
 * support/private-postgres.ts). While the database cannot answer: the token endpoint gives 503
 * JSON with Retry-After and issues nothing, requireBearer gives 503 (never 401), the
 * authorization endpoint a 503 page that redirects nowhere, each within a bound set by the
 * configured timeouts. When the database is back, service resumes without restarting the app,
 * and the app's connections return to normal.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, type ConnectStorageOptions } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { startInstance } from '../support/instances.js';
import {
  api,
  authorizePage,
  eventually,
  exchange,
  expectApiUnavailable,
  expectPageUnavailable,
  expectTokenUnavailable,
  refresh,
  seedCode,
  seedTokens,
} from '../support/faults.js';
import {
  privatePostgresAvailability,
  startPrivatePostgres,
  type PrivatePostgres,
} from '../support/private-postgres.js';

const availability = privatePostgresAvailability();
const APP = 'oob-fault-app';
const POOL = 4;
/** Timeouts of the app's pool, so each outage is answered within a known bound. */
const TIMEOUTS = { statementTimeoutMs: 1000, connectionTimeoutMs: 1000, idleTimeoutMs: 1000 };
/** Answer within the longest timeout plus slack for a loaded machine. */
const BOUND_MS = 3000;

interface Reported {
  warnings: { requestId: string; error: unknown }[];
  hooked: { error: unknown; status: number }[];
}

describe.skipIf(!availability.ok)(
  `PostgreSQL outages${availability.ok ? '' : ` (NOT TESTED: ${availability.reason})`}`,
  () => {
    let cluster: PrivatePostgres;
    const opened: { t: TestApp; storage: SqlStorage }[] = [];

    beforeAll(async () => {
      cluster = await startPrivatePostgres(availability as Extract<typeof availability, { ok: true }>);
    }, 60_000);

    afterAll(async () => {
      for (const { t, storage } of opened) {
        await t.close();
        await storage.close();
      }
      await cluster?.destroy();
    });

    /**
     * A test app on the private cluster, in a schema of its own (its own clients), with its own
     * pool and its failures recorded. `table(name)` qualifies a table for the test's sessions.
     */
    async function appOnCluster(options: ConnectStorageOptions = {}) {
      const schema = `app${opened.length}`;
      const url = new URL(cluster.url);
      url.searchParams.set('schema', schema);
      const storage = await connectStorage(url.href, {
        migrate: true,
        maxConnections: POOL,
        applicationName: APP,
        ...TIMEOUTS,
        ...options,
      });
      const reported: Reported = { warnings: [], hooked: [] };
      const t = await createTestApp({
        storage,
        logger: {
          warn: (_message, details) => reported.warnings.push(details as Reported['warnings'][number]),
          error: () => {},
        },
        onError: (error, context) => reported.hooked.push({ error, status: context.status }),
      });
      opened.push({ t, storage });
      const table = (name: string) => `"${schema}".${name}`;
      return { t, storage, reported, table, url: url.href };
    }

    /** The driver's error behind a reported outage (StorageUnavailableError -> its cause). */
    const driverCode = (error: unknown) => ((error as { cause?: { code?: string } }).cause ?? {}).code;

    it('stopped: 503 everywhere within the bound; started again: service resumes without a restart', async () => {
      const { t, reported } = await appOnCluster();
      const { accessToken, refreshToken } = await seedTokens(t);
      expect((await api(t, accessToken)).res.status).toBe(200);
      // A browser with a login session in the database.
      const started = await t.agent.get('/oauth/authorize').query({
        response_type: 'code',
        client_id: t.codeClient.clientId,
        redirect_uri: 'https://client.example/cb',
      });
      expect(started.status).toBe(200);

      await cluster.stop('fast');
      try {
        expectApiUnavailable(await api(t, accessToken), BOUND_MS);
        expectTokenUnavailable(await refresh(t, refreshToken), BOUND_MS);
        expectPageUnavailable(await authorizePage(t), BOUND_MS);
        // Its session cannot be read: the page, not a "no sign-in in progress".
        const resumed = await t.agent.get('/oauth/authorize/resume');
        expect(resumed.status).toBe(503);
        expect(resumed.text).toContain('Temporarily unavailable');
        // Each outage was logged as a warning once, with its request id, and reached the hook.
        expect(reported.warnings).toHaveLength(4);
        expect(reported.hooked.map((h) => h.status)).toEqual([503, 503, 503, 503]);
        expect(reported.hooked.every((h) => (h.error as Error).name === 'StorageUnavailableError')).toBe(
          true,
        );
      } finally {
        await cluster.start();
      }

      expect((await api(t, accessToken)).res.status).toBe(200);
      const refreshed = await refresh(t, refreshToken);
      expect(refreshed.res.status, refreshed.text).toBe(200);
      expect((await api(t, JSON.parse(refreshed.text).access_token)).res.status).toBe(200);
      expect((await authorizePage(t)).res.status).toBe(200);
      expect((await t.agent.get('/oauth/authorize/resume')).status).toBe(200);
      expect(await cluster.connectionsOf(APP)).toBeLessThanOrEqual(POOL);
    }, 60_000);

    it('backends terminated: idle ones are replaced unseen, a busy one answers 503, never 401 or 500', async () => {
      const { t, reported, table } = await appOnCluster();
      const { accessToken } = await seedTokens(t);
      // Fill the pool, then kill every one of its connections while they are idle.
      await Promise.all(Array.from({ length: POOL }, () => api(t, accessToken)));
      const killed = await cluster.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1',
        [APP],
      );
      expect(killed.length).toBeGreaterThan(0);
      const after = await Promise.all(Array.from({ length: 8 }, () => api(t, accessToken)));
      for (const { res } of after) expect([200, 503]).toContain(res.status);
      expect((await api(t, accessToken)).res.status).toBe(200);

      // A request blocked on a lock has its backend terminated under it.
      const locker = new pg.Client({ connectionString: cluster.adminUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query(`lock table ${table('oauth_tokens')} in access exclusive mode`);
        const pending = api(t, accessToken);
        const waiting = await eventually(async () => {
          const rows = await cluster.query(
            "select pid from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
            [APP],
          );
          return rows.length > 0;
        }, 2000);
        expect(waiting).toBe(true);
        await cluster.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'",
          [APP],
        );
        expectApiUnavailable(await pending, BOUND_MS);
        expect(reported.warnings.map((w) => driverCode(w.error))).toContain('57P01');
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      expect((await api(t, accessToken)).res.status).toBe(200);
    }, 60_000);

    it('a table locked by another session: 503 after statement_timeout, also for requests queued for the pool', async () => {
      const { t, reported, table } = await appOnCluster();
      const { accessToken } = await seedTokens(t);
      const code = await seedCode(t);
      const locker = new pg.Client({ connectionString: cluster.adminUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query(
          `lock table ${table('oauth_tokens')}, ${table('oauth_ephemeral')} in access exclusive mode`,
        );
        // Twice the pool: half wait on the lock, half for a connection.
        const answers = await Promise.all(Array.from({ length: POOL * 2 }, () => api(t, accessToken)));
        for (const answer of answers) expectApiUnavailable(answer, BOUND_MS + TIMEOUTS.connectionTimeoutMs);
        const codes = new Set(reported.warnings.map((w) => driverCode(w.error)));
        expect(codes.has('57014')).toBe(true); // statement_timeout
        expectTokenUnavailable(await exchange(t, code), BOUND_MS);
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      expect((await api(t, accessToken)).res.status).toBe(200);
      // The code was not spent by the failed exchange: its UPDATE never ran.
      const exchanged = await exchange(t, code);
      expect(exchanged.res.status, exchanged.text).toBe(200);
    }, 60_000);

    it('with lockTimeoutMs: a lock wait gives up first, with 55P03', async () => {
      const { t, reported, table } = await appOnCluster({ lockTimeoutMs: 200 });
      const { accessToken } = await seedTokens(t);
      const locker = new pg.Client({ connectionString: cluster.adminUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query(`lock table ${table('oauth_tokens')} in access exclusive mode`);
        expectApiUnavailable(await api(t, accessToken), 800);
        expect(driverCode(reported.warnings.at(-1)!.error)).toBe('55P03');
      } finally {
        await locker.query('rollback');
        await locker.end();
      }
      expect((await api(t, accessToken)).res.status).toBe(200);
    }, 30_000);

    it('connection slots exhausted: 503 at once (53300); freed: service resumes', async () => {
      const { t, reported } = await appOnCluster();
      const { accessToken } = await seedTokens(t);
      // Once the app's pools are empty (idleTimeoutMs), take every slot an ordinary role may use.
      expect(await eventually(async () => (await cluster.connectionsOf(APP)) === 0, 5000)).toBe(true);
      const hogs: pg.Client[] = [];
      try {
        for (;;) {
          const hog = new pg.Client({ connectionString: cluster.url, application_name: 'oob-hog' });
          try {
            await hog.connect();
          } catch (err) {
            expect((err as { code?: string }).code).toBe('53300');
            break;
          }
          hogs.push(hog);
          expect(hogs.length).toBeLessThan(40);
        }
        expectApiUnavailable(await api(t, accessToken), BOUND_MS);
        expectPageUnavailable(await authorizePage(t), BOUND_MS);
        expect(reported.warnings.map((w) => driverCode(w.error))).toContain('53300');

        await Promise.all(hogs.splice(0).map((hog) => hog.end()));
        expect((await api(t, accessToken)).res.status).toBe(200);
        expect((await authorizePage(t)).res.status).toBe(200);
      } finally {
        await Promise.all(hogs.map((hog) => hog.end()));
      }
    }, 60_000);

    it('an instance under load through an outage: its memory and connections return to normal', async () => {
      const { t, url } = await appOnCluster();
      const { accessToken } = await seedTokens(t);
      const instance = await startInstance({
        databaseUrl: url,
        baseUrl: t.baseUrl,
        providers: [{ name: 'Development provider', identifier: t.provider.identifier }],
        sessionSecret: 'a test session secret that is long enough',
        env: { EXPOSE_STATS: '1', APPLICATION_NAME: 'oob-fault-instance' },
        nodeArgs: ['--expose-gc'],
      });
      try {
        const heap = async () =>
          ((await (await fetch(`${instance.origin}/__stats`)).json()) as { heapUsed: number }).heapUsed;
        const burst = async (expected: number) => {
          for (let round = 0; round < 10; round += 1) {
            const answers = await Promise.all(
              Array.from({ length: 50 }, () =>
                fetch(`${instance.origin}/v1/realms`, {
                  headers: { authorization: `Bearer ${accessToken}` },
                }),
              ),
            );
            for (const res of answers) {
              await res.body?.cancel();
              expect(res.status).toBe(expected);
            }
          }
        };
        await burst(200);
        await burst(200);
        const before = await heap();
        await cluster.stop('fast');
        try {
          await burst(503);
          await burst(503);
        } finally {
          await cluster.start();
        }
        await burst(200);
        await burst(200);
        const after = await heap();
        console.log(
          `instance heap after a GC: ${(before / 2 ** 20).toFixed(1)} MB before the outage, ${(after / 2 ** 20).toFixed(1)} MB after 1000 requests answered 503 and recovery`,
        );
        expect(after - before).toBeLessThan(4 * 2 ** 20);
        expect(await cluster.connectionsOf('oob-fault-instance')).toBeLessThanOrEqual(10);
      } finally {
        await instance.stop();
      }
    }, 60_000);

    it('connection counts return to normal once the app is idle', async () => {
      const { t } = await appOnCluster();
      const { accessToken } = await seedTokens(t);
      await Promise.all(Array.from({ length: 40 }, () => api(t, accessToken)));
      expect(await cluster.connectionsOf(APP)).toBeLessThanOrEqual(POOL * opened.length);
      // idleTimeoutMs (1 s here) closes pooled connections nobody uses.
      expect(await eventually(async () => (await cluster.connectionsOf(APP)) === 0, 5000)).toBe(true);
    }, 30_000);
  },
);
