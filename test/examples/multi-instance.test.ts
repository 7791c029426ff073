import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import {
  REDIS_URL,
  dropSchema,
  postgresAvailability,
  postgresUrlFor,
  redisAvailability,
  uniqueSchema,
} from '../support/databases.js';
import { freePort, runCodeFlow, runExample } from './run-example.js';

/*
 * examples/multi-instance.ts on a real PostgreSQL and a real Redis: a whole code flow through its
 * round-robin load balancer, answered by both instances. A missing PostgreSQL or Redis is reported
 * and skips; with CI set it fails, as in test/support/databases.ts.
 */

const postgres = await postgresAvailability();
const redis = await redisAvailability();
const missing = [postgres, redis].flatMap((a) => (a.ok ? [] : [a.reason]));
const schema = uniqueSchema('example_multi');

afterAll(async () => {
  if (postgres.ok) await dropSchema(schema);
});

describe.skipIf(missing.length > 0)(
  `examples/multi-instance.ts${missing.length > 0 ? ` (NOT TESTED: ${missing.join('; ')})` : ''}`,
  () => {
    it('runs a code flow through the load balancer, answered by both instances', async () => {
      const port = await freePort();
      const run = runExample('multi-instance.ts', {
        PORT: String(port),
        DATABASE_URL: postgresUrlFor(schema),
        REDIS_URL,
        SESSION_SECRET: `a session secret of at least 32 characters ${randomUUID()}`,
      });
      try {
        const [, clientSecret] = await run.waitFor(/secret \(shown once\): (\S+)/, 30_000);
        const [, providerUrl] = await run.waitFor(/OpenID provider (\S+)/, 30_000);
        const { body, answeredBy } = await runCodeFlow(
          {
            baseUrl: `http://localhost:${port}`,
            origin: `http://127.0.0.1:${port}`,
            clientId: 'multi-instance-demo',
            clientSecret: clientSecret!,
            redirectUri: 'http://127.0.0.1:8080/callback',
            scope: 'realms:read',
            providerIdentifier: `${providerUrl}/`,
            user: 'alice',
          },
          '/v1/realms',
        );
        expect(body).toMatchObject({ realms: ['Ravenholm'] });
        expect([...answeredBy].sort()).toEqual(['1', '2']);
      } finally {
        expect(await run.stop()).not.toBe(1);
      }
    }, 60_000);
  },
);
