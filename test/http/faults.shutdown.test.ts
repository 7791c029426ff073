/**
 * Graceful shutdown: an app process (test/support/instance-process.ts, which calls
 * closeGracefully on SIGTERM) receives SIGTERM while requests are in flight: slow API calls and
 * token exchanges waiting on a database lock. It stops accepting connections at once, every
 * request in flight completes, the pool is closed, and the process exits on its own, promptly:
 * nothing (timer, socket, pool) is left holding it.
 */
import { createConnection } from 'node:net';
import { once } from 'node:events';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, createAuthorizationServer, registerClient } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { seedCode, seedTokens } from '../support/grants.js';
import {
  dropSchema,
  POSTGRES_URL,
  postgresAvailability,
  postgresUrlFor,
  uniqueSchema,
} from '../support/databases.js';
import { startInstance } from '../support/instances.js';

const postgres = await postgresAvailability();
const REDIRECT = 'https://client.example/cb';
const SLOW_MS = 1500;
/** The process must be gone this long after SIGTERM (the slowest request plus slack). */
const EXIT_WITHIN_MS = SLOW_MS + 3000;

describe.skipIf(!postgres.ok)(
  `graceful shutdown on SIGTERM${postgres.ok ? '' : ` (NOT TESTED: ${postgres.reason})`}`,
  () => {
    const schema = uniqueSchema('shutdown');
    const databaseUrl = postgresUrlFor(schema);
    let storage: SqlStorage;
    let op: RunningDevelopmentProvider;

    beforeAll(async () => {
      op = await startDevelopmentProvider();
      storage = await connectStorage(databaseUrl, { migrate: true });
    });

    const cleanups: (() => Promise<void>)[] = [];
    afterAll(async () => {
      for (const cleanup of cleanups) await cleanup();
      await storage?.close();
      await op?.close();
      await dropSchema(schema);
    });

    it('finishes every request in flight, refuses new connections, closes the pool and exits by itself', async () => {
      const { clientId, clientSecret } = await registerClient(storage, {
        applicationName: 'Shutdown test',
        redirectUri: REDIRECT,
      });
      const issuing = createAuthorizationServer({
        baseUrl: 'http://127.0.0.1:1',
        storage,
        providers: [{ name: 'Dev', identifier: op.identifier }],
        session: { secret: 'a shutdown test session secret, long enough' },
      });
      const { accessToken: token } = await seedTokens(issuing, clientId, 'u1', []);
      const codes: string[] = [];
      for (let i = 0; i < 4; i++) {
        codes.push(await seedCode(issuing, { clientId, userId: 'u1', redirectUri: REDIRECT, scopes: [] }));
      }

      const locker = new pg.Client({ connectionString: POSTGRES_URL });
      const instance = await startInstance({
        databaseUrl,
        baseUrl: 'http://127.0.0.1:1',
        providers: [{ name: 'Dev', identifier: op.identifier }],
        sessionSecret: 'a shutdown test session secret, long enough',
        env: { SLOW_ROUTE_MS: String(SLOW_MS) },
      });
      // Whatever happens below, no process or lock is left behind.
      cleanups.push(async () => {
        if (instance.process.exitCode === null && instance.process.signalCode === null) {
          instance.process.kill('SIGKILL');
        }
        await locker.end().catch(() => undefined);
      });
      const port = Number(new URL(instance.origin).port);

      // Token exchanges that will wait on a lock the test holds, and slow API calls.
      await locker.connect();
      await locker.query('begin');
      await locker.query(`lock table "${schema}".oauth_ephemeral in access exclusive mode`);
      const exchanges = codes.map((code) =>
        fetch(`${instance.origin}/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            redirect_uri: REDIRECT,
            client_id: clientId,
            client_secret: clientSecret!,
          }),
        }),
      );
      const slow = Array.from({ length: 6 }, () =>
        fetch(`${instance.origin}/v1/slow`, { headers: { authorization: `Bearer ${token}` } }),
      );
      // Let every request reach the app before the signal.
      await new Promise((resolve) => setTimeout(resolve, 300));

      const exit = once(instance.process, 'exit') as Promise<[number | null, string | null]>;
      const signalled = Date.now();
      instance.process.kill('SIGTERM');
      await new Promise((resolve) => setTimeout(resolve, 200));
      // No longer accepting: a new connection is refused while the old ones are served.
      const refused = await new Promise<string>((resolve) => {
        const socket = createConnection({ host: '127.0.0.1', port });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
      expect(instance.process.exitCode).toBeNull();

      await new Promise((resolve) => setTimeout(resolve, 300));
      await locker.query('rollback');

      const answers = await Promise.all([...exchanges, ...slow]);
      expect(answers.map((res) => res.status)).toEqual(Array(answers.length).fill(200));
      for (const res of answers.slice(0, codes.length)) {
        expect(await res.json()).toMatchObject({ token_type: 'Bearer' });
      }
      for (const res of answers.slice(codes.length)) expect(await res.json()).toMatchObject({ slow: true });

      const [code, signal] = await Promise.race([
        exit,
        new Promise<never>((_resolve, reject) =>
          setTimeout(() => reject(new Error(`still running:\n${instance.stderr()}`)), EXIT_WITHIN_MS + 2000),
        ),
      ]);
      const exitedAfter = Date.now() - signalled;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(exitedAfter).toBeLessThan(EXIT_WITHIN_MS);
      expect(instance.messages.find((m) => 'closed' in m)).toMatchObject({ closed: { timedOut: false } });
      expect(instance.stderr()).not.toContain('still running');
      // Prompt exit is the proof the pool was closed: its open sockets would hold the process
      // until idleTimeoutMs (10 s) closed them.
    }, 30_000);
  },
);
