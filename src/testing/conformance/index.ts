import assert from 'node:assert/strict';
import type { ClientRecord, Storage } from '../../storage/types.js';
import type {
  ConformanceStats,
  ConformanceSuite,
  ConformanceTestApi,
  OptionalPart,
  StorageConformanceOptions,
} from './api.js';
import { clientAdminTests } from './client-admin.js';
import { clientTests } from './clients.js';
import { without } from './fixtures.js';
import { ephemeralTests } from './ephemeral.js';
import { faultSweepTests } from './fault-sweeps.js';
import { grantTests } from './grants.js';
import { keyTests, userClaimsTests } from './keys.js';
import { pruneTests } from './prune.js';
import { raceTests } from './races.js';
import { readerTests } from './reader.js';
import { rateLimitTests } from './rate-limit.js';
import { ruleTests } from './rules.js';
import { removalRaceTests } from './race-removal.js';
import { tokenTests } from './tokens.js';
import { userTests } from './users.js';
import { usageTests } from './usage.js';

export type {
  ConformanceStats,
  ConformanceTestApi,
  OptionalPart,
  RaceOptions,
  RegisterBlock,
  StorageConformanceOptions,
} from './api.js';
export {
  describeEphemeralStoreConformance,
  type EphemeralStoreConformanceOptions,
} from './ephemeral-describe.js';
export { withFaults, type FaultTiming, type FaultyStorage, type RecordedCall } from './faults.js';
export { instrumentStorage, type AroundCall, type StorageCall } from './instrument.js';

/** Each optional part, and the methods that make it up. */
const OPTIONAL_METHODS: Record<OptionalPart, (storage: Storage) => unknown[]> = {
  prune: (storage) => [storage.prune],
  ephemeralPrune: (storage) => [storage.ephemeral.prune],
  clientAdmin: (storage) => [
    storage.clients.create,
    storage.clients.list,
    storage.clients.update,
    storage.clients.remove,
  ],
  userFind: (storage) => [storage.users.find],
  keys: (storage) => [storage.keys],
  userClaims: (storage) => [storage.users.saveClaims, storage.users.findClaims],
  usage: (storage) => [storage.usage],
};

/**
 * Registers the storage conformance suite: one test per guarantee of the storage contract
 * (`ephemeral`, `clients`, `users`, `grants`, `tokens`, and the optional `prune`, operator client
 * methods and `users.find`), then the library's rules run over the adapter (code replay,
 * refresh rotation and reuse, absolute revocation, disabled and removed clients), the same
 * operations with each storage call failing in turn, and races between them explored by
 * fast-check's scheduler. A custom adapter that passes it can back `createAuthorizationServer`.
 *
 * The storage is created once, in a `beforeAll` hook, and closed after the last test. Every test
 * uses fresh random ids and hashes and passes `now` explicitly (the current time, so that stores
 * with native key expiry work), so the database need not be empty and tests do not depend on each
 * other. Assertions use `node:assert/strict`; a failure names the method and the guarantee it
 * broke. The race tests need `fast-check` installed (a development dependency of your project).
 *
 * The kit imports no test framework: pass yours in. With mocha or `node:test`, pass
 * `{ describe, it, beforeAll: before, afterAll: after }`.
 *
 * Returns counters filled in as the tests run (how many interleavings the races explored).
 *
 * @example
 * // test/storage/conformance.test.ts
 * import { afterAll, beforeAll, describe, it } from 'vitest';
 * import { describeStorageConformance } from 'openid-oauth-bridge/testing';
 * import { myStorage } from '../src/my-storage.js';
 *
 * describeStorageConformance(
 *   { describe, it, beforeAll, afterAll },
 *   { name: 'my storage', createStorage: () => myStorage(), absent: ['prune', 'keys', 'userClaims'] },
 * );
 */
export function describeStorageConformance<S extends Storage>(
  test: ConformanceTestApi,
  options: StorageConformanceOptions<S>,
): ConformanceStats {
  const absent = new Set(options.absent ?? []);
  const stats: ConformanceStats = { raceRuns: 0, interleavings: 0, interrupted: 0 };
  test.describe(`storage conformance: ${options.name}`, () => {
    let created: S | undefined;
    test.beforeAll(async () => {
      created = await options.createStorage();
    });
    test.afterAll(async () => {
      if (created && options.close) await options.close(created);
    });

    const storage = (): S => {
      assert.ok(
        created,
        `createStorage() of "${options.name}" did not run or failed: see the error of the beforeAll hook`,
      );
      return created;
    };
    const has = (part: OptionalPart) => !absent.has(part);
    const suite: ConformanceSuite = {
      it: test.it,
      describe: test.describe,
      storage,
      has,
      part: (part) => registerOptional(test, absent, part),
      async putClient(client: ClientRecord, replace = false) {
        if (has('clientAdmin')) {
          const clients = storage().clients;
          if (!replace) return clients.create!(client);
          const changes = without(client, 'clientId', 'grantType', 'createdAt');
          const updated = await clients.update!(client.clientId, changes);
          assert.ok(updated, `clients.update(${client.clientId}) resolved null for a registered client`);
          return;
        }
        assert.ok(
          options.putClient,
          "absent lists 'clientAdmin', so the kit needs the putClient option to register the clients its tests use",
        );
        await options.putClient(storage(), client);
      },
      races: { runs: 100, timeLimitMs: 15_000, ...options.races },
      explored(runs, distinct, interrupted) {
        stats.raceRuns += runs;
        stats.interleavings += distinct;
        if (interrupted) stats.interrupted++;
      },
    };

    ephemeralTests({
      it: test.it,
      describe: test.describe,
      store: () => storage().ephemeral,
      prune: has('ephemeralPrune'),
    });
    rateLimitTests(suite);
    clientTests(suite);
    clientAdminTests(suite);
    userTests(suite);
    grantTests(suite);
    tokenTests(suite);
    readerTests(suite);
    keyTests(suite);
    userClaimsTests(suite);
    usageTests(suite);
    pruneTests(suite);
    ruleTests(suite);
    removalRaceTests(suite);
    faultSweepTests(suite);
    raceTests(suite);
    test.afterAll(async () => {
      if (stats.raceRuns === 0) return;
      const stopped = stats.interrupted ? `; ${stats.interrupted} stopped early by races.timeLimitMs` : '';
      console.log(
        `storage conformance (${options.name}): races: ${stats.interleavings} interleavings explored ` +
          `(${stats.raceRuns} runs${stopped})`,
      );
    });
    if (absent.size > 0) declaredAbsentTest(suite, absent);
  });
  return stats;
}

/** `describe` for a present part; `describe.skip`, with the reason in the title, for an absent one. */
function registerOptional(
  test: ConformanceTestApi,
  absent: ReadonlySet<OptionalPart>,
  part: OptionalPart,
): ConformanceTestApi['describe'] {
  if (!absent.has(part)) return test.describe;
  const skipped = (name: string, fn: () => void) =>
    test.describe.skip(`${name}: skipped, the adapter declares no ${part} (absent: ['${part}'])`, fn);
  return Object.assign(skipped, { skip: test.describe.skip });
}

/** An optional part declared absent must really be absent, or its guarantees would go untested. */
function declaredAbsentTest({ it, storage }: ConformanceSuite, absent: ReadonlySet<OptionalPart>): void {
  it(`optional parts declared absent (${[...absent].join(', ')}) are absent`, async () => {
    for (const part of absent) {
      const present = OPTIONAL_METHODS[part](storage()).filter((method) => method !== undefined);
      assert.equal(
        present.length,
        0,
        `absent lists '${part}' but the adapter has some of its methods: their guarantees would go untested. ` +
          `Remove '${part}' from absent, or remove the methods.`,
      );
    }
  });
}
