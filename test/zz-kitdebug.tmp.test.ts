import { afterAll, beforeAll, describe, it } from 'vitest';
import { connectStorage } from '../src/index.js';
import { describeStorageConformance } from '../src/testing/index.js';
import { dropSchema, postgresUrlFor, uniqueSchema } from '../test/support/databases.js';
const schema = uniqueSchema('kitdbg');
describeStorageConformance({ describe, it, beforeAll, afterAll }, {
  name: 'pg', createStorage: () => connectStorage(postgresUrlFor(schema), { migrate: true }),
  close: async (s) => { await s.close(); await dropSchema(schema); },
  races: { runs: Number(process.env.RUNS ?? 40), ...(process.env.SEED ? { seed: Number(process.env.SEED), path: process.env.FCPATH } : {}) },
});
