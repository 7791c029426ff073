import assert from 'node:assert/strict';
import type { Storage } from '../../storage/types.js';
import type { ConformanceSuite, ConformanceTestApi, OptionalPart, StorageConformanceOptions } from './api.js';
import { clientAdminTests } from './client-admin.js';
import { clientTests } from './clients.js';
import { codeTests } from './codes.js';
import { consentListTests } from './consent-list.js';
import { consentTests } from './consents.js';
import { nonceTests } from './nonces.js';
import { pruneTests } from './prune.js';
import { revocationTests } from './revocation.js';
import { sessionTests } from './sessions.js';
import { tokenTests } from './tokens.js';
import { userTests } from './users.js';

export type { ConformanceTestApi, OptionalPart, RegisterBlock, StorageConformanceOptions } from './api.js';

const OPTIONAL_PARTS: readonly OptionalPart[] = ['sessions', 'prune'];

/**
 * Registers the storage conformance suite: one test per guarantee of the storage contract, for
 * every domain (clients, users, consents, codes, tokens, nonces, and the optional sessions and
 * prune). A custom adapter that passes it can back `createAuthorizationServer`.
 *
 * The storage is created once, in a `beforeAll` hook, and closed after the last test. Every test
 * uses fresh random ids and hashes and passes `now` explicitly (the current time, so that stores
 * with native key expiry work), so the database need not be empty and tests do not depend on each
 * other. Single-use operations are raced by 50 concurrent callers. Assertions use
 * `node:assert/strict`; a failure names the method and the guarantee it broke.
 *
 * The kit imports no test framework: pass yours in. With mocha or `node:test`, pass
 * `{ describe, it, beforeAll: before, afterAll: after }`.
 *
 * @example
 * // test/storage.conformance.test.ts
 * import { afterAll, beforeAll, describe, it } from 'vitest';
 * import { describeStorageConformance } from 'openid-oauth-bridge/testing';
 * import { myStorage } from '../src/my-storage.js';
 *
 * describeStorageConformance(
 *   { describe, it, beforeAll, afterAll },
 *   { name: 'my storage', createStorage: () => myStorage(), absent: ['prune'] },
 * );
 */
export function describeStorageConformance<S extends Storage>(
  test: ConformanceTestApi,
  options: StorageConformanceOptions<S>,
): void {
  const absent = new Set(options.absent ?? []);
  test.describe(`storage conformance: ${options.name}`, () => {
    let storage: S | undefined;
    test.beforeAll(async () => {
      storage = await options.createStorage();
    });
    test.afterAll(async () => {
      if (storage && options.close) await options.close(storage);
    });

    const suite: ConformanceSuite = {
      it: test.it,
      describe: test.describe,
      storage() {
        assert.ok(
          storage,
          `createStorage() of "${options.name}" did not run or failed: see the error of the beforeAll hook`,
        );
        return storage;
      },
    };
    clientTests(suite);
    clientAdminTests(suite);
    userTests(suite);
    consentTests(suite);
    consentListTests(suite);
    codeTests(suite);
    tokenTests(suite);
    revocationTests(suite);
    nonceTests(suite);
    sessionTests(suite, registerOptional(test, absent, 'sessions'));
    pruneTests(suite, registerOptional(test, absent, 'prune'));
    if (absent.size > 0) declaredAbsentTest(suite, absent);
  });
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
    for (const part of OPTIONAL_PARTS) {
      assert.ok(
        !absent.has(part) || storage()[part] === undefined,
        `absent lists '${part}' but the adapter has storage.${part}: its guarantees would go untested. ` +
          `Remove '${part}' from absent.`,
      );
    }
  });
}
