/**
 * The SQL adapter against the storage conformance kit, on SQLite (in memory) and on PostgreSQL
 * (TEST_POSTGRES_URL, in a schema of this run's own, dropped afterwards): the same suite a user
 * runs against their own adapter. PostgreSQL missing: a warning and a skipped suite, or a failure
 * when CI is set.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { connectStorage } from '../../src/index.js';
import { describeStorageConformance } from '../../src/testing/index.js';
import {
  dropSchema,
  postgresAvailability,
  postgresUrlFor,
  uniqueSchema,
  type Availability,
} from '../support/databases.js';

const test = { describe, it, beforeAll, afterAll };

describeStorageConformance(test, {
  name: 'SQL adapter on SQLite (in memory)',
  createStorage: () => connectStorage('sqlite::memory:', { migrate: true }),
  close: (storage) => storage.close(),
});

// Under CI, postgresAvailability throws for a missing PostgreSQL: report it as a failing test
// rather than losing the SQLite suite above with the whole file.
const postgres: Availability | Error = await postgresAvailability().catch((error: unknown) =>
  error instanceof Error ? error : new Error(String(error)),
);

if (postgres instanceof Error) {
  describe('storage conformance: SQL adapter on PostgreSQL', () => {
    it('needs a reachable PostgreSQL when CI is set', () => {
      throw postgres;
    });
  });
} else if (postgres.ok) {
  const schema = uniqueSchema('kit');
  describeStorageConformance(test, {
    name: 'SQL adapter on PostgreSQL',
    createStorage: () => connectStorage(postgresUrlFor(schema), { migrate: true }),
    close: async (storage) => {
      await storage.close();
      await dropSchema(schema);
    },
  });
} else {
  describe.skip(`storage conformance: SQL adapter on PostgreSQL (NOT TESTED: ${postgres.reason})`, () => {
    it('passes the storage conformance kit', () => undefined);
  });
}
