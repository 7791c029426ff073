/**
 * Hundreds of parallel requests across two app instances (processes, each with its own pool of
 * 10) on one PostgreSQL database: every single-use value is used once, consents stay
 * consistent, and nothing fails with a 5xx although most requests wait for a connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStorage, createAuthorizationServer, registerClient } from '../../src/index.js';
import { type SqlStorage } from '../../src/storage/index.js';
import { startDevelopmentProvider, type RunningDevelopmentProvider } from '../../src/testing/index.js';
import { issueCode, recordConsent, standingGrant } from '../../src/grants/index.js';
import { seedGrant, seedTokens } from '../support/grants.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from '../support/databases.js';
import { startInstance, type Instance } from '../support/instances.js';

const postgres = await postgresAvailability();
const REDIRECT = 'https://client.example/cb';
const PARALLEL = 200;

describe.skipIf(!postgres.ok)(
  `${PARALLEL} parallel requests across two instances${postgres.ok ? '' : ` (NOT TESTED: ${postgres.reason})`}`,
  () => {
    const schema = uniqueSchema('concurrency');
    const databaseUrl = postgresUrlFor(schema);
    let op: RunningDevelopmentProvider;
    let storage: SqlStorage;
    let instances: Instance[];
    let client: { clientId: string; clientSecret: string };
    let issuing: ReturnType<typeof createAuthorizationServer>;

    beforeAll(async () => {
      op = await startDevelopmentProvider();
      storage = await connectStorage(databaseUrl, { migrate: true });
      const issued = await registerClient(storage, {
        applicationName: 'Busy printer',
        redirectUri: REDIRECT,
      });
      client = { clientId: issued.clientId, clientSecret: issued.clientSecret! };
      const config = {
        databaseUrl,
        baseUrl: 'http://127.0.0.1:1',
        providers: [{ name: 'Dev', identifier: op.identifier }],
        sessionSecret: 'a concurrency test session secret, long enough',
      };
      issuing = createAuthorizationServer({
        baseUrl: config.baseUrl,
        providers: config.providers,
        storage,
        session: { secret: config.sessionSecret },
      });
      instances = await Promise.all([startInstance(config), startInstance(config)]);
    }, 60_000);

    afterAll(async () => {
      await Promise.all((instances ?? []).map((instance) => instance.stop()));
      await storage?.close();
      await op?.close();
      await dropSchema(schema);
    });

    const at = (i: number) => instances[i % 2]!.origin;
    /** A code of u1 under u1's standing grant (a new one once a replay has revoked the last). */
    const newCode = async () => {
      const grant =
        (await standingGrant(issuing, 'u1', client.clientId)) ??
        (await seedGrant(issuing, client.clientId, 'u1', []));
      return issueCode(issuing, {
        clientId: client.clientId,
        userId: 'u1',
        redirectUri: REDIRECT,
        scopes: [],
        grantId: grant.grantId,
        codeChallenge: null,
        codeChallengeMethod: null,
      });
    };
    const exchange = (origin: string, code: string) =>
      fetch(`${origin}/oauth/token`, {
        method: 'POST',
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }),
      });
    const api = (origin: string, token: string) =>
      fetch(`${origin}/v1/realms`, { headers: { authorization: `Bearer ${token}` } });

    it('one code raced by 200 exchanges: exactly one wins, the rest are invalid_grant, no 5xx', async () => {
      const code = await newCode();
      const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => exchange(at(i), code)));
      const statuses = answers.map((res) => res.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 400)).toHaveLength(PARALLEL - 1);
      const bodies = await Promise.all(answers.map((res) => res.json() as Promise<Record<string, string>>));
      expect(bodies.filter((b) => b.error === 'invalid_grant')).toHaveLength(PARALLEL - 1);
      // The replays revoked the grant: the winner's token works nowhere (RFC 6749 4.1.2).
      const winner = bodies.find((b) => b.access_token)!;
      for (let i = 0; i < 2; i += 1) expect((await api(at(i), winner.access_token!)).status).toBe(401);
    }, 30_000);

    it('200 codes exchanged at once: all succeed, every token works at both instances', async () => {
      await newCode();
      const codes = await Promise.all(Array.from({ length: PARALLEL }, newCode));
      const answers = await Promise.all(codes.map((code, i) => exchange(at(i), code)));
      expect(answers.map((res) => res.status)).toEqual(Array(PARALLEL).fill(200));
      const tokens = await Promise.all(
        answers.map(async (res) => ((await res.json()) as { access_token: string }).access_token),
      );
      expect(new Set(tokens).size).toBe(PARALLEL);
      const checks = await Promise.all(tokens.map((token, i) => api(at(i + 1), token)));
      expect(checks.map((res) => res.status)).toEqual(Array(PARALLEL).fill(200));
    }, 30_000);

    it('300 API calls at once, 15 per connection: all 200', async () => {
      const { accessToken: token } = await seedTokens(issuing, client.clientId, 'u1', []);
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => api(at(i), token)));
      expect(answers.map((res) => res.status)).toEqual(Array(300).fill(200));
    }, 30_000);

    it('consents given at once from two pools end in one standing grant', async () => {
      const other = await connectStorage(databaseUrl);
      try {
        const scopes = Array.from({ length: 20 }, (_, i) => `scope${i}`);
        const deps = (s: SqlStorage) => ({ ...issuing, storage: s });
        const given = await Promise.all(
          scopes.map((scope, i) =>
            recordConsent(deps(i % 2 ? storage : other), 'u2', client.clientId, [scope]),
          ),
        );
        const stored = await storage.grants.list({ userId: 'u2', clientId: client.clientId });
        expect(stored).toHaveLength(1);
        expect(stored[0]!.revokedAt).toBeNull();
        // Every consent saw its scope stored under the grant it returned, at the time it returned.
        expect(given.every(({ grant }, i) => grant.scopes.includes(scopes[i]!))).toBe(true);
      } finally {
        await other.close();
      }
    }, 30_000);
  },
);
