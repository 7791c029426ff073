/**
 * The SQL adapter against the storage conformance kit, on SQLite and on PostgreSQL: the same
 * suite a user runs against their own adapter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { connectStorage } from '../src/index.js';
import { describeStorageConformance } from '../src/testing/index.js';
import { dropSchema, postgresAvailability, postgresUrlFor, uniqueSchema } from './support/databases.js';

const test = { describe, it, beforeAll, afterAll };
const postgres = await postgresAvailability();

const dir = mkdtempSync(join(tmpdir(), 'oob-kit-'));
describeStorageConformance(test, {
  name: 'SQL adapter on SQLite',
  createStorage: () => connectStorage(`sqlite:${join(dir, 'kit.db')}`, { migrate: true }),
  close: async (storage) => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  },
});

if (postgres.ok) {
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
  describe.skip(`SQL adapter on PostgreSQL (NOT TESTED: ${postgres.reason})`, () => {
    it('passes the storage conformance kit', () => undefined);
  });
}
